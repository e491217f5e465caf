using System;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>sbx.Browser against canned gateway answers: the requests sent, the browser read back, errors typed.</summary>
    [TestFixture]
    public class BrowserTests
    {
        const string Token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzYngtMSJ9.sig_-1";
        const string Cdp = "http://a.test:8080/cdp/sbx-1/" + Token;

        static void AssertJson(string expected, Seen req) =>
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(expected), req.Json), "sent: " + req.Body);

        static JObject Running() => new JObject
        {
            ["browser"] = new JObject
            {
                ["cdpPort"] = 9222,
                ["cdpUrl"] = Cdp,
                ["websocketDebuggerUrl"] = "ws://a.test:8080/cdp/sbx-1/" + Token + "/devtools/browser/b-1",
                ["liveViewUrl"] = Cdp + "/live",
                ["expireTime"] = "2025-01-02T04:04:05Z",
                ["startTime"] = "2025-01-02T03:04:05Z",
                ["pid"] = 52,
                ["sandboxId"] = "sbx-1",
                ["state"] = "BROWSER_STATE_RUNNING",
                ["windowSize"] = "800,600",
                ["error"] = "",
            },
        };

        // As the gateway answers for a browser that does not run: every field, empty.
        static JObject Stopped(string state = "BROWSER_STATE_STOPPED", string error = "") => new JObject
        {
            ["browser"] = new JObject
            {
                ["cdpPort"] = 9222,
                ["cdpUrl"] = "",
                ["error"] = error,
                ["liveViewUrl"] = "",
                ["pid"] = 0,
                ["sandboxId"] = "sbx-1",
                ["state"] = state,
                ["websocketDebuggerUrl"] = "",
                ["windowSize"] = "",
            },
        };

        [Test]
        public async Task StartSendsItsOptionsAndReadsTheUrls()
        {
            var t = await Connected.To(s => FakeHandler.Json(Running()));
            var b = await t.Item1.Browser.StartAsync("800,600", TimeSpan.FromMinutes(10));
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/browser:start", req.Uri.AbsolutePath);
            Assert.AreEqual("application/json", req.ContentType);
            AssertJson(@"{""windowSize"": ""800,600"", ""urlTtl"": ""600s""}", req);
            Assert.AreEqual(BrowserState.Running, b.State);
            Assert.IsTrue(b.IsRunning);
            Assert.AreEqual(Cdp, b.CdpUrl);
            Assert.AreEqual("ws://a.test:8080/cdp/sbx-1/" + Token + "/devtools/browser/b-1", b.WebSocketDebuggerUrl);
            Assert.AreEqual(Cdp + "/live", b.LiveViewUrl);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 4, 4, 5, TimeSpan.Zero), b.ExpiresAt);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero), b.StartedAt);
            Assert.AreEqual(52, b.Pid);
            Assert.AreEqual(9222, b.CdpPort);
            Assert.AreEqual("800,600", b.WindowSize);
            Assert.AreEqual("sbx-1", b.SandboxId);
            Assert.AreEqual("", b.Error);
            // The URLs are credentials: ToString leaves them out.
            StringAssert.DoesNotContain(Token, b.ToString());
            Assert.AreEqual("BrowserInfo(running, pid 52)", b.ToString());

            await t.Item1.Browser.StartAsync();
            AssertJson("{}", t.Item2.Last);
            await t.Item1.Browser.StartAsync("", TimeSpan.Zero);
            AssertJson("{}", t.Item2.Last);
        }

        [Test]
        public async Task GetAsksForFreshUrlsForTheirTtl()
        {
            var t = await Connected.To(s => FakeHandler.Json(Running()));
            var b = await t.Item1.Browser.GetAsync();
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/browser", bodiless: true);
            Assert.AreEqual("", t.Item2.Last.Uri.Query);
            Assert.AreEqual(Cdp, b.CdpUrl);
            await t.Item1.Browser.GetAsync(TimeSpan.FromHours(2));
            Assert.AreEqual(new[] { "7200s" }, t.Item2.Last.Query("urlTtl"));
        }

        [Test]
        public async Task StatesWithoutUrlsAndACrashsError()
        {
            var state = "BROWSER_STATE_STOPPED";
            var error = "";
            var t = await Connected.To(s => FakeHandler.Json(Stopped(state, error)));
            var b = await t.Item1.Browser.GetAsync();
            Assert.AreEqual(BrowserState.Stopped, b.State);
            Assert.IsFalse(b.IsRunning);
            Assert.AreEqual("", b.CdpUrl);
            Assert.AreEqual("", b.WebSocketDebuggerUrl);
            Assert.IsNull(b.ExpiresAt);
            Assert.AreEqual(0, b.Pid);
            Assert.AreEqual("BrowserInfo(stopped)", b.ToString());

            state = "BROWSER_STATE_CRASHED";
            error = "killed by signal 9 (SIGKILL)";
            b = await t.Item1.Browser.GetAsync();
            Assert.AreEqual(BrowserState.Crashed, b.State);
            Assert.AreEqual("killed by signal 9 (SIGKILL)", b.Error);

            state = "BROWSER_STATE_STARTING";
            Assert.AreEqual(BrowserState.Starting, (await t.Item1.Browser.GetAsync()).State);
            // A state a newer server adds, or none.
            state = "BROWSER_STATE_HIBERNATING";
            Assert.AreEqual(BrowserState.Unknown, (await t.Item1.Browser.GetAsync()).State);
            state = "BROWSER_STATE_UNSPECIFIED";
            Assert.AreEqual(BrowserState.Unknown, (await t.Item1.Browser.GetAsync()).State);

            var empty = await Connected.To(s => FakeHandler.Json("{}"));
            await AssertAsync.Throws<TalonException>(() => empty.Item1.Browser.GetAsync());
        }

        [Test]
        public async Task StopPostsAndReadsTheStoppedBrowser()
        {
            var t = await Connected.To(s => FakeHandler.Json(Stopped()));
            var b = await t.Item1.Browser.StopAsync();
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/browser:stop");
            AssertJson("{}", t.Item2.Last);
            Assert.AreEqual(BrowserState.Stopped, b.State);
        }

        [Test]
        public async Task AScreenshotIsThePngsBytes()
        {
            var png = new byte[] { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3 };
            var t = await Connected.To(s => FakeHandler.Json(new JObject
            {
                ["png"] = Convert.ToBase64String(png),
                ["url"] = "https://example.com/",
                ["title"] = "Example Domain",
            }));
            CollectionAssert.AreEqual(png, await t.Item1.Browser.ScreenshotAsync());
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/browser/screenshot", bodiless: true);
            Assert.AreEqual("", t.Item2.Last.Uri.Query);

            var shot = await t.Item1.Browser.TakeScreenshotAsync(fullPage: true);
            Assert.AreEqual(new[] { "true" }, t.Item2.Last.Query("fullPage"));
            CollectionAssert.AreEqual(png, shot.Png);
            Assert.AreEqual("https://example.com/", shot.Url);
            Assert.AreEqual("Example Domain", shot.Title);
            await t.Item1.Browser.ScreenshotAsync(fullPage: true);
            Assert.AreEqual(new[] { "true" }, t.Item2.Last.Query("fullPage"));
        }

        [Test]
        public async Task BrowserErrorsAreTyped()
        {
            var t = await Connected.To(s =>
            {
                if (s.Uri.AbsolutePath.EndsWith("/screenshot"))
                    return Answers.Error(400, 9, "the browser is not running", "req-9");
                if (s.Uri.AbsolutePath.EndsWith(":start"))
                    return Answers.Error(400, 3, "window size 50,50: each 100-7680");
                return Answers.Error(503, 14, "no chromium in this image");
            });
            var e = await AssertAsync.Throws<FailedPreconditionException>(() => t.Item1.Browser.ScreenshotAsync());
            Assert.AreEqual(400, e.Status);
            Assert.AreEqual("FAILED_PRECONDITION", e.Code);
            Assert.AreEqual("req-9", e.RequestId);
            Assert.AreEqual("the browser is not running", e.Message);
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Browser.StartAsync("50,50"));
            await AssertAsync.Throws<UnavailableException>(() => t.Item1.Browser.StopAsync());

            var noPng = await Connected.To(s => FakeHandler.Json("{\"url\": \"about:blank\"}"));
            await AssertAsync.Throws<TalonException>(() => noPng.Item1.Browser.ScreenshotAsync());
            var badPng = await Connected.To(s => FakeHandler.Json("{\"png\": \"%%%\"}"));
            await AssertAsync.Throws<TalonException>(() => badPng.Item1.Browser.TakeScreenshotAsync());
        }
    }
}
