using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>sbx.Code against canned gateway answers: the requests sent, the run's events folded, errors typed.</summary>
    [TestFixture]
    public class CodeTests
    {
        // The first bytes of every PNG file, and a tiny one as base64 the way Jupyter sends it (line breaks included).
        static readonly byte[] PngSignature = { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A };
        static readonly byte[] Png = PngSignature.Concat(new byte[] { 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52 }).ToArray();
        static readonly string PngB64 = Convert.ToBase64String(Png).Insert(8, "\n");

        static void AssertJson(string expected, Seen req) =>
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(expected), req.Json), "sent: " + req.Body);

        static JObject Out(string text, bool stderr = false) =>
            new JObject { [stderr ? "stderr" : "stdout"] = new JObject { ["text"] = text } };

        static JObject Result(JObject data, bool main = false) =>
            new JObject { ["result"] = new JObject { ["data"] = data, ["isMainResult"] = main } };

        static JObject Completed(int count = 1, string duration = "0.25s", bool interrupted = false, bool timedOut = false) =>
            new JObject
            {
                ["completed"] = new JObject
                {
                    ["executionCount"] = count,
                    ["duration"] = duration,
                    ["interrupted"] = interrupted,
                    ["timedOut"] = timedOut,
                },
            };

        static JObject Context(string id = "ctx-1", string language = "CODE_LANGUAGE_PYTHON", int count = 0) => new JObject
        {
            ["contextId"] = id,
            ["language"] = language,
            ["cwd"] = "/workspace",
            ["executionCount"] = count,
            ["createTime"] = "2025-01-02T03:04:05Z",
        };

        [Test]
        public async Task RunSendsItsBodyAndFoldsEveryEventInOrder()
        {
            var t = await Connected.To(s => FakeHandler.Lines(
                Out("hel"), Out("lo\n"), Out("careful\n", stderr: true),
                Result(new JObject { ["image/png"] = PngB64, ["text/plain"] = "<Figure size 640x480 with 1 Axes>" }),
                Result(new JObject { ["text/plain"] = "42" }, main: true),
                Completed(3, "1.5s")));
            var seen = new List<string>();
            var x = await t.Item1.Code.RunAsync("print('hello')\n6 * 7", new RunCodeOptions
            {
                ContextId = "ctx-1",
                Timeout = TimeSpan.FromSeconds(30),
                OnStdout = s => seen.Add("out:" + s),
                OnStderr = s => seen.Add("err:" + s),
                OnResult = r => seen.Add("result:" + string.Join("+", r.Formats())),
                OnError = e => seen.Add("error:" + e.Name),
            });
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/code:run", req.Uri.AbsolutePath);
            Assert.AreEqual("application/json", req.ContentType);
            Assert.AreEqual("application/x-ndjson", req.Accept);
            Assert.AreEqual("Bearer key-1", req.Authorization);
            AssertJson(@"{""code"": ""print('hello')\n6 * 7"", ""contextId"": ""ctx-1"", ""timeout"": ""30s""}", req);

            Assert.AreEqual("hello\n", x.Stdout);
            Assert.AreEqual("careful\n", x.Stderr);
            Assert.AreEqual(2, x.Results.Count);
            Assert.IsFalse(x.Results[0].IsMainResult);
            Assert.IsTrue(x.Results[1].IsMainResult);
            Assert.AreEqual("42", x.Text);
            Assert.IsNull(x.Error);
            Assert.AreEqual(3, x.ExecutionCount);
            Assert.AreEqual(TimeSpan.FromSeconds(1.5), x.Duration);
            Assert.IsFalse(x.Interrupted);
            Assert.IsFalse(x.TimedOut);
            Assert.AreEqual(new[] { "out:hel", "out:lo\n", "err:careful\n", "result:image/png+text/plain", "result:text/plain" }, seen.ToArray());
        }

        [Test]
        public async Task EveryMimeKindOfAResultReads()
        {
            var data = new JObject
            {
                ["text/plain"] = "{'a': [1, 2]}",
                ["text/html"] = "<b>bold</b>",
                ["text/markdown"] = "# title",
                ["text/latex"] = "$x^2$",
                ["image/png"] = PngB64,
                ["image/jpeg"] = Convert.ToBase64String(new byte[] { 0xFF, 0xD8, 0xFF }),
                ["image/svg+xml"] = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
                ["application/json"] = "{\"a\": [1, 2], \"when\": \"2025-01-02T03:04:05Z\"}",
                ["application/javascript"] = "console.log(1)",
                ["application/pdf"] = Convert.ToBase64String(Encoding.ASCII.GetBytes("%PDF-1.4")),
                ["application/vnd.custom+json"] = "{}",
            };
            var t = await Connected.To(s => FakeHandler.Lines(Result(data, main: true), Completed()));
            var r = (await t.Item1.Code.RunAsync("x")).Results.Single();
            Assert.AreEqual("{'a': [1, 2]}", r.Text);
            Assert.AreEqual("<b>bold</b>", r.Html);
            Assert.AreEqual("# title", r.Markdown);
            Assert.AreEqual("$x^2$", r.Latex);
            CollectionAssert.AreEqual(Png, r.Png);
            CollectionAssert.AreEqual(PngSignature, r.Png.Take(8).ToArray());
            Assert.AreEqual(PngB64, r.PngBase64);
            CollectionAssert.AreEqual(new byte[] { 0xFF, 0xD8, 0xFF }, r.Jpeg);
            StringAssert.StartsWith("<svg", r.Svg);
            Assert.AreEqual("console.log(1)", r.JavaScript);
            Assert.AreEqual("%PDF-1.4", Encoding.ASCII.GetString(r.Pdf));
            // JSON is parsed, and a string that looks like a date stays the string it was.
            Assert.AreEqual(new[] { 1, 2 }, r.Json["a"].Select(v => (int)v).ToArray());
            Assert.AreEqual(JTokenType.String, r.Json["when"].Type);
            Assert.AreEqual("2025-01-02T03:04:05Z", (string)r.Json["when"]);
            Assert.AreEqual("{}", r.Get("application/vnd.custom+json"));
            Assert.AreEqual(data.Properties().Select(p => p.Name).OrderBy(n => n, StringComparer.Ordinal).ToArray(), r.Formats().ToArray());
            Assert.IsNull(r.Get("image/gif"));
            Assert.IsNull(r.Bytes("image/gif"));
        }

        [Test]
        public void AResultWithoutAKindIsNullAndABrokenOneIsAnError()
        {
            var r = new CodeResult(new Dictionary<string, string> { ["text/plain"] = "1" });
            Assert.IsNull(r.Png);
            Assert.IsNull(r.Json);
            Assert.IsNull(r.Html);
            Assert.IsFalse(r.IsMainResult);
            var bad = new CodeResult(new Dictionary<string, string> { ["image/png"] = "not base64!", ["application/json"] = "{nope" });
            Assert.Throws<TalonException>(() => { var unused = bad.Png; });
            Assert.Throws<TalonException>(() => { var unused = bad.Json; });
            Assert.AreEqual("CodeResult(image/png, text/plain)",
                new CodeResult(new Dictionary<string, string> { ["text/plain"] = "", ["image/png"] = "" }).ToString());
        }

        [Test]
        public async Task TheCodesErrorIsDataNotAnException()
        {
            var t = await Connected.To(s => FakeHandler.Lines(
                Out("before\n"),
                new JObject
                {
                    ["codeError"] = new JObject
                    {
                        ["name"] = "ZeroDivisionError",
                        ["value"] = "division by zero",
                        ["traceback"] = new JArray("Traceback (most recent call last)", "----> 1 1/0"),
                    },
                },
                Completed(2)));
            CodeError called = null;
            var x = await t.Item1.Code.RunAsync("print('before'); 1/0", new RunCodeOptions { OnError = e => called = e });
            Assert.AreEqual("ZeroDivisionError", x.Error.Name);
            Assert.AreEqual("division by zero", x.Error.Value);
            Assert.AreEqual(new[] { "Traceback (most recent call last)", "----> 1 1/0" }, x.Error.Traceback.ToArray());
            Assert.AreSame(x.Error, called);
            Assert.AreEqual("ZeroDivisionError: division by zero", x.Error.ToString());
            Assert.AreEqual("before\n", x.Stdout);
            Assert.IsNull(x.Text);
        }

        [Test]
        public async Task AnInterruptedOrTimedOutRunSaysSo()
        {
            var t = await Connected.To(s => FakeHandler.Lines(
                new JObject { ["codeError"] = new JObject { ["name"] = "KeyboardInterrupt", ["value"] = "" } },
                Completed(4, "2.05s", interrupted: true, timedOut: true)));
            var x = await t.Item1.Code.RunAsync("import time; time.sleep(100)");
            Assert.IsTrue(x.Interrupted);
            Assert.IsTrue(x.TimedOut);
            Assert.AreEqual("KeyboardInterrupt", x.Error.Name);
            Assert.AreEqual(0, x.Error.Traceback.Count);
        }

        [Test]
        public async Task TextThatLooksLikeJsonDatesIsKeptAsSent()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Out("2025-01-02T03:04:05Z\n"),
                Result(new JObject { ["text/plain"] = "2025-01-02T03:04:05.123+02:00" }, main: true), Completed()));
            var x = await t.Item1.Code.RunAsync("print(now)");
            Assert.AreEqual("2025-01-02T03:04:05Z\n", x.Stdout);
            Assert.AreEqual("2025-01-02T03:04:05.123+02:00", x.Text);
        }

        [Test]
        public async Task TheDefaultContextOfALanguageAndLanguagesByName()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Completed()));
            await t.Item1.Code.RunAsync("1");
            AssertJson(@"{""code"": ""1""}", t.Item2.Last);
            await t.Item1.Code.RunAsync("1", new RunCodeOptions { Language = "JS", Timeout = TimeSpan.Zero });
            AssertJson(@"{""code"": ""1"", ""language"": ""CODE_LANGUAGE_JAVASCRIPT""}", t.Item2.Last);
            await t.Item1.Code.RunAsync("echo", new RunCodeOptions { Language = CodeLanguage.Bash, Timeout = TimeSpan.FromMilliseconds(1500) });
            AssertJson(@"{""code"": ""echo"", ""language"": ""CODE_LANGUAGE_BASH"", ""timeout"": ""1.5s""}", t.Item2.Last);
            await t.Item1.Code.RunAsync("", new RunCodeOptions { Language = CodeLanguage.Python });
            AssertJson(@"{""code"": """", ""language"": ""CODE_LANGUAGE_PYTHON""}", t.Item2.Last);
            Assert.AreEqual(4, t.Item2.Requests.Count);

            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Code.RunAsync("1", new RunCodeOptions { Language = "ruby" }));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Code.RunAsync(null));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Code.CreateContextAsync("cobol"));
            Assert.AreEqual(4, t.Item2.Requests.Count);
        }

        [Test]
        public async Task ARunsErrorsAreTyped()
        {
            // Before the stream: the HTTP answer's error.
            var gone = await Connected.To(s => Answers.Error(404, 5, "code context ctx-9 not found", "req-5"));
            var e = await AssertAsync.Throws<NotFoundException>(() => gone.Item1.Code.RunAsync("1", new RunCodeOptions { ContextId = "ctx-9" }));
            Assert.AreEqual(404, e.Status);
            Assert.AreEqual("req-5", e.RequestId);
            Assert.AreEqual("code context ctx-9 not found", e.Message);

            // In the stream: its error line.
            var lost = await Connected.To(s => FakeHandler.Lines(Out("partial"),
                new JObject { ["error"] = new JObject { ["code"] = 14, ["message"] = "worker lost" } }));
            var u = await AssertAsync.Throws<UnavailableException>(() => lost.Item1.Code.RunAsync("1"));
            Assert.AreEqual("worker lost", u.Message);

            // A stream that ends before "completed" leaves the run's end unknown.
            var cut = await Connected.To(s => FakeHandler.Lines(Out("partial")));
            await AssertAsync.Throws<TalonException>(() => cut.Item1.Code.RunAsync("1"));

            // A line that is not JSON.
            var junk = await Connected.To(s => FakeHandler.Json("<html>proxy</html>\n"));
            await AssertAsync.Throws<TalonException>(() => junk.Item1.Code.RunAsync("1"));

            var busy = await Connected.To(s => Answers.Error(429, 8, "16 contexts at most"));
            await AssertAsync.Throws<RateLimitException>(() => busy.Item1.Code.CreateContextAsync());
        }

        [Test]
        public async Task EventsANewerServerAddsAreSkipped()
        {
            var t = await Connected.To(s => FakeHandler.Lines(new JObject { ["progress"] = new JObject { ["pct"] = 50 } }, Out("ok"), Completed()));
            Assert.AreEqual("ok", (await t.Item1.Code.RunAsync("1")).Stdout);
        }

        [Test]
        public async Task CancellingStopsFollowingARunThatSaysNothing()
        {
            var never = new TaskCompletionSource<bool>().Task;
            var t = await Connected.To(s => new HttpResponseMessage(HttpStatusCode.OK)
            {
                Content = GatedLines.Content(Out("started"), never, Completed()),
            });
            var chunks = new List<string>();
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200)))
                await AssertAsync.Throws<OperationCanceledException>(() =>
                    t.Item1.Code.RunAsync("import time; time.sleep(1000)", new RunCodeOptions { OnStdout = chunks.Add }, cts.Token));
            Assert.AreEqual(new[] { "started" }, chunks.ToArray());
        }

        [Test]
        public async Task TheRequestTimeoutBoundsContextCallsButNotARun()
        {
            // As in the Python SDK: a run may wait for its default kernel to start, or be silent, for as long as it likes.
            var fake = new FakeHandler(s => s.Method.Method == "GET" && s.Uri.AbsolutePath == "/v1/sandboxes/sbx-1"
                ? Answers.Wrapped(Answers.Sandbox()) : FakeHandler.Lines(Out("late"), Completed()));
            var o = Opt.Over(fake);
            o.RequestTimeout = TimeSpan.FromMilliseconds(100);
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(o));
            fake.Delay = TimeSpan.FromMilliseconds(400);
            Assert.AreEqual("late", (await sbx.Code.RunAsync("import time; time.sleep(0.4)")).Stdout);
            await AssertAsync.Throws<TalonTimeoutException>(() => sbx.Code.ListContextsAsync());
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(100)))
                await AssertAsync.Throws<OperationCanceledException>(() => sbx.Code.RunAsync("1", null, cts.Token));
        }

        [Test]
        public async Task CreateContextSendsLanguageCwdAndEnvs()
        {
            var t = await Connected.To(s => FakeHandler.Json(new JObject { ["context"] = Context("ctx-7", "CODE_LANGUAGE_JAVASCRIPT") }));
            var ctx = await t.Item1.Code.CreateContextAsync(CodeLanguage.JavaScript, "/tmp", new Dictionary<string, string> { ["A"] = "1" });
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/code-contexts", req.Uri.AbsolutePath);
            AssertJson(@"{""language"": ""CODE_LANGUAGE_JAVASCRIPT"", ""cwd"": ""/tmp"", ""env"": {""A"": ""1""}}", req);
            Assert.AreEqual("ctx-7", ctx.Id);
            Assert.AreEqual("javascript", ctx.Language);
            Assert.AreEqual("/workspace", ctx.Cwd);
            Assert.AreEqual(0, ctx.ExecutionCount);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero), ctx.CreatedAt);

            await t.Item1.Code.CreateContextAsync();
            AssertJson(@"{""language"": ""CODE_LANGUAGE_PYTHON""}", t.Item2.Last);
            await t.Item1.Code.CreateContextAsync("bash", "", new Dictionary<string, string>());
            AssertJson(@"{""language"": ""CODE_LANGUAGE_BASH""}", t.Item2.Last);
        }

        [Test]
        public async Task ListRestartInterruptAndDeleteByIdOrContext()
        {
            var t = await Connected.To(s =>
            {
                var p = s.Uri.AbsolutePath;
                if (s.Method.Method == "GET")
                    return FakeHandler.Json(new JObject { ["contexts"] = new JArray(Context("ctx-1", count: 5), Context("ctx-2", "CODE_LANGUAGE_BASH")) });
                if (p.EndsWith(":restart"))
                    return FakeHandler.Json(new JObject { ["context"] = Context("ctx-1") });
                return FakeHandler.Json("{}");
            });
            var code = t.Item1.Code;
            var list = await code.ListContextsAsync();
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/code-contexts", bodiless: true);
            Assert.AreEqual(new[] { "ctx-1", "ctx-2" }, list.Select(c => c.Id).ToArray());
            Assert.AreEqual(5, list[0].ExecutionCount);
            Assert.AreEqual("bash", list[1].Language);

            var fresh = await code.RestartContextAsync(list[0]);
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/code-contexts/ctx-1:restart");
            AssertJson("{}", t.Item2.Last);
            Assert.AreEqual(0, fresh.ExecutionCount);

            await code.InterruptAsync("ctx-2");
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/code-contexts/ctx-2:interrupt");
            AssertJson("{}", t.Item2.Last);
            await code.InterruptAsync(list[0]);
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/code-contexts/ctx-1:interrupt");

            await code.DeleteContextAsync(list[1]);
            t.Item2.AssertLast("DELETE", "/v1/sandboxes/sbx-1/code-contexts/ctx-2", bodiless: true);
            await code.DeleteContextAsync("ctx/odd");
            Assert.AreEqual("/v1/sandboxes/sbx-1/code-contexts/ctx%2Fodd", t.Item2.Last.Uri.AbsolutePath);

            var n = t.Item2.Requests.Count;
            await AssertAsync.Throws<InvalidArgumentException>(() => code.InterruptAsync(""));
            await AssertAsync.Throws<InvalidArgumentException>(() => code.RestartContextAsync((string)null));
            await AssertAsync.Throws<InvalidArgumentException>(() => code.DeleteContextAsync(""));
            Assert.AreEqual(n, t.Item2.Requests.Count);

            var none = await Connected.To(s => FakeHandler.Json("{}"));
            Assert.AreEqual(0, (await none.Item1.Code.ListContextsAsync()).Count);
            await AssertAsync.Throws<TalonException>(() => none.Item1.Code.CreateContextAsync());
        }

        [Test]
        public async Task ContextCallsMapTheServersErrors()
        {
            var t = await Connected.To(s => s.Uri.AbsolutePath.EndsWith(":interrupt")
                ? Answers.Error(404, 5, "code context ctx-1 not found")
                : Answers.Error(403, 7, "the role viewer may not run code"));
            await AssertAsync.Throws<NotFoundException>(() => t.Item1.Code.InterruptAsync("ctx-1"));
            await AssertAsync.Throws<PermissionDeniedException>(() => t.Item1.Code.DeleteContextAsync("ctx-1"));
            await AssertAsync.Throws<PermissionDeniedException>(() => t.Item1.Code.RunAsync("1"));
        }

        [Test]
        public async Task TheSandboxKeepsOneCodeAndOneBrowser()
        {
            var t = await Connected.To(s => FakeHandler.Json("{}"));
            Assert.AreSame(t.Item1.Code, t.Item1.Code);
            Assert.AreSame(t.Item1.Browser, t.Item1.Browser);
            Assert.AreEqual(0, t.Item2.Requests.Count);
        }
    }
}
