using System;
using System.IO;
using System.Linq;
using System.Net.Http;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// Code contexts and the browser against a running gateway (`talon up`
    /// on an image with python3, ipykernel, matplotlib and chromium, as the
    /// host image has): TALON_URL and TALON_API_KEY, as LiveTests. Ignored
    /// without TALON_URL.
    /// </summary>
    [TestFixture]
    public class LiveCodeBrowserTests
    {
        static readonly byte[] PngSignature = { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A };

        Sandbox _sbx;

        static void NeedGateway()
        {
            if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TALON_URL")))
                Assert.Ignore("TALON_URL is not set: live tests need a running gateway (talon up)");
        }

        // Synchronous: NUnit 2.6 does not await an async TearDown. Dispose kills it.
        [TearDown]
        public void KillIt()
        {
            if (_sbx != null)
                _sbx.Dispose();
            _sbx = null;
        }

        async Task<Sandbox> Create()
        {
            NeedGateway();
            _sbx = await Sandbox.CreateAsync(new SandboxOptions
            {
                Timeout = TimeSpan.FromMinutes(5),
                MemoryMib = 1024, // Chromium and matplotlib together
                Metadata = new System.Collections.Generic.Dictionary<string, string> { ["suite"] = "dotnet-live" },
            });
            return _sbx;
        }

        static void AssertPng(byte[] png, string what)
        {
            Assert.IsNotNull(png, what + ": no PNG");
            Assert.Greater(png.Length, 100, what);
            CollectionAssert.AreEqual(PngSignature, png.Take(8).ToArray(), what + " does not start with the PNG signature");
        }

        [Test]
        public async Task APythonContextKeepsItsStateAndReturnsAPlot()
        {
            var sbx = await Create();
            var ctx = await sbx.Code.CreateContextAsync(CodeLanguage.Python);
            Assert.AreEqual("python", ctx.Language);
            Assert.AreEqual("/workspace", ctx.Cwd);
            var on = new RunCodeOptions { ContextId = ctx.Id };

            var first = await sbx.Code.RunAsync("x = 41", on);
            Assert.IsNull(first.Error, "x = 41 raised");
            var second = await sbx.Code.RunAsync("x + 1", on);
            Assert.IsNull(second.Error);
            Assert.AreEqual("42", second.Text);
            Assert.AreEqual(2, second.ExecutionCount);
            Assert.IsTrue(second.Results.Single().IsMainResult);

            var printed = new StringBuilder();
            var plot = await sbx.Code.RunAsync(
                "import matplotlib.pyplot as plt\nprint('plotting')\nplt.plot([1, 2, 3], [4, 1, 9])\nplt.title('dotnet')\nplt.show()",
                new RunCodeOptions { ContextId = ctx.Id, OnStdout = s => printed.Append(s) });
            Assert.IsNull(plot.Error, plot.Error == null ? "" : plot.Error.Name + ": " + plot.Error.Value);
            Assert.AreEqual("plotting\n", plot.Stdout);
            Assert.AreEqual("plotting\n", printed.ToString());
            var image = plot.Results.FirstOrDefault(r => r.Formats().Contains("image/png"));
            Assert.IsNotNull(image, "no image/png result: " + string.Join("; ", plot.Results));
            AssertPng(image.Png, "the plot");
            CollectionAssert.AreEqual(image.Png, Convert.FromBase64String(image.PngBase64));

            var contexts = await sbx.Code.ListContextsAsync();
            Assert.IsTrue(contexts.Any(c => c.Id == ctx.Id && c.ExecutionCount == 3), string.Join("; ", contexts));
            await sbx.Code.DeleteContextAsync(ctx);
            Assert.IsFalse((await sbx.Code.ListContextsAsync()).Any(c => c.Id == ctx.Id));
            await AssertAsync.Throws<NotFoundException>(() => sbx.Code.RunAsync("x", on));
        }

        [Test]
        public async Task TheCodesErrorComesBackWithItsName()
        {
            var sbx = await Create();
            // The default Python context, made on first use.
            var x = await sbx.Code.RunAsync("print('before')\n1 / 0");
            Assert.AreEqual("before\n", x.Stdout);
            Assert.IsNotNull(x.Error);
            Assert.AreEqual("ZeroDivisionError", x.Error.Name);
            Assert.AreEqual("division by zero", x.Error.Value);
            Assert.IsTrue(x.Error.Traceback.Any(l => l.Contains("ZeroDivisionError")), string.Join("\n", x.Error.Traceback));
            Assert.IsFalse(x.Interrupted);

            var json = await sbx.Code.RunAsync("from IPython.display import JSON, HTML, display\n"
                + "display(HTML('<b>bold</b>'))\ndisplay(JSON({'a': [1, 2]}))");
            Assert.IsNull(json.Error, json.Error == null ? "" : json.Error.Value);
            Assert.AreEqual("<b>bold</b>", json.Results[0].Html);
            Assert.AreEqual(2, (int)json.Results[1].Json["a"][1]);

            var bash = await sbx.Code.RunAsync("echo $((6 * 7)); false", new RunCodeOptions { Language = CodeLanguage.Bash });
            Assert.AreEqual("42\n", bash.Stdout);
            Assert.AreEqual("ExitStatus", bash.Error.Name);
        }

        [Test]
        public async Task AnInterruptStopsALongSleepAndKeepsTheState()
        {
            var sbx = await Create();
            var ctx = await sbx.Code.CreateContextAsync();
            await sbx.Code.RunAsync("kept = 'yes'", new RunCodeOptions { ContextId = ctx.Id });
            var sleeping = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            var started = DateTime.UtcNow;
            var run = sbx.Code.RunAsync("import time\nprint('sleeping', flush=True)\ntime.sleep(120)", new RunCodeOptions
            {
                ContextId = ctx.Id,
                OnStdout = s => sleeping.TrySetResult(true),
            });
            Assert.AreSame(sleeping.Task, await Task.WhenAny(sleeping.Task, run, Task.Delay(TimeSpan.FromSeconds(60))), "the run never printed");
            await sbx.Code.InterruptAsync(ctx);
            Assert.AreSame(run, await Task.WhenAny(run, Task.Delay(TimeSpan.FromSeconds(30))), "the interrupted run did not end");
            var x = await run;
            Assert.Less((DateTime.UtcNow - started).TotalSeconds, 60);
            Assert.IsTrue(x.Interrupted);
            Assert.IsFalse(x.TimedOut);
            Assert.AreEqual("KeyboardInterrupt", x.Error.Name);
            Assert.AreEqual("'yes'", (await sbx.Code.RunAsync("kept", new RunCodeOptions { ContextId = ctx.Id })).Text);
        }

        [Test]
        public async Task ARestartLosesTheState()
        {
            var sbx = await Create();
            var ctx = await sbx.Code.CreateContextAsync("python", envs: new System.Collections.Generic.Dictionary<string, string> { ["GREETING"] = "hej" });
            var on = new RunCodeOptions { ContextId = ctx.Id };
            await sbx.Code.RunAsync("y = 7", on);
            Assert.AreEqual("'hej'", (await sbx.Code.RunAsync("import os; os.environ['GREETING']", on)).Text);
            var fresh = await sbx.Code.RestartContextAsync(ctx);
            Assert.AreEqual(ctx.Id, fresh.Id);
            Assert.AreEqual(0, fresh.ExecutionCount);
            var x = await sbx.Code.RunAsync("y", on);
            Assert.IsNotNull(x.Error, "y survived the restart");
            Assert.AreEqual("NameError", x.Error.Name);
            Assert.AreEqual(1, x.ExecutionCount);
        }

        [Test]
        public async Task ABrowserIsDrivenOverItsCdpUrlScreenshottedAndStopped()
        {
            var sbx = await Create();
            var info = await sbx.Browser.StartAsync("1024,768", TimeSpan.FromMinutes(10));
            try
            {
                Assert.AreEqual(BrowserState.Running, info.State, info.Error);
                Assert.AreEqual("1024,768", info.WindowSize);
                Assert.Greater(info.Pid, 0);
                StringAssert.Contains("/cdp/" + sbx.SandboxId + "/", info.CdpUrl);
                Assert.IsNotNull(info.ExpiresAt);

                using (var http = new HttpClient())
                {
                    // The URL is the credential: no API key. /json/version names the WebSocket through the gateway.
                    var version = JObject.Parse(await http.GetStringAsync(info.CdpUrl + "/json/version"));
                    var ws = (string)version["webSocketDebuggerUrl"];
                    StringAssert.StartsWith("ws", ws);
                    StringAssert.Contains("/cdp/" + sbx.SandboxId + "/", ws);
                    StringAssert.DoesNotContain("127.0.0.1:9222", ws);
                    var live = await http.GetAsync(info.LiveViewUrl);
                    Assert.IsTrue(live.IsSuccessStatusCode, "live view answered " + (int)live.StatusCode);
                    StringAssert.StartsWith("text/html", live.Content.Headers.ContentType.ToString());
                }

                var answer = await Cdp(info.WebSocketDebuggerUrl, "{\"id\":1,\"method\":\"Browser.getVersion\"}", 1);
                var product = (string)answer["result"]["product"];
                StringAssert.Contains("Chrome", product, answer.ToString());

                AssertPng(await sbx.Browser.ScreenshotAsync(), "the screenshot");
                var full = await sbx.Browser.TakeScreenshotAsync(fullPage: true);
                AssertPng(full.Png, "the full-page screenshot");

                var again = await sbx.Browser.GetAsync();
                Assert.AreEqual(BrowserState.Running, again.State);
                Assert.AreEqual(info.Pid, again.Pid);
                Assert.IsNotEmpty(again.CdpUrl);
            }
            finally
            {
                var stopped = await sbx.Browser.StopAsync();
                Assert.AreEqual(BrowserState.Stopped, stopped.State);
            }
            var after = await sbx.Browser.GetAsync();
            Assert.AreEqual(BrowserState.Stopped, after.State);
            Assert.AreEqual("", after.CdpUrl);
            await AssertAsync.Throws<FailedPreconditionException>(() => sbx.Browser.ScreenshotAsync());
        }

        /// <summary>One CDP command over a WebSocket of its own: the answer whose id is id (events before it are skipped).</summary>
        static async Task<JObject> Cdp(string url, string command, int id)
        {
            using (var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60)))
            using (var ws = new ClientWebSocket())
            {
                await ws.ConnectAsync(new Uri(url), cts.Token);
                var bytes = Encoding.UTF8.GetBytes(command);
                await ws.SendAsync(new ArraySegment<byte>(bytes), WebSocketMessageType.Text, true, cts.Token);
                var buffer = new byte[64 * 1024];
                while (true)
                {
                    using (var message = new MemoryStream())
                    {
                        WebSocketReceiveResult r;
                        do
                        {
                            r = await ws.ReceiveAsync(new ArraySegment<byte>(buffer), cts.Token);
                            if (r.MessageType == WebSocketMessageType.Close)
                                Assert.Fail("the DevTools WebSocket closed before answering: " + r.CloseStatusDescription);
                            message.Write(buffer, 0, r.Count);
                        } while (!r.EndOfMessage);
                        var m = JObject.Parse(Encoding.UTF8.GetString(message.ToArray()));
                        if ((int?)m["id"] == id)
                        {
                            await ws.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", cts.Token);
                            return m;
                        }
                    }
                }
            }
        }
    }
}
