using System;
using System.Threading;
using System.Threading.Tasks;
using M = TalonGenerated.Model;

namespace Talon
{
    /// <summary>
    /// sbx.Browser: the sandbox's Chromium, headless, as a process of the
    /// sandbox's default user (its profile, cookies and logins in
    /// /workspace/.talon/browser-profile, kept across stop and start). One
    /// per sandbox. StartAsync gives its URLs: drive it with a CDP client,
    /// Playwright's connectOverCDP(CdpUrl) or any WebSocket client on
    /// WebSocketDebuggerUrl (Puppeteer's browserWSEndpoint). The Python
    /// SDK's sbx.browser (the REST API's BrowserService).
    /// </summary>
    public sealed class Browser
    {
        readonly Sandbox _s;

        internal Browser(Sandbox sandbox)
        {
            _s = sandbox;
        }

        /// <summary>
        /// Starts the browser, or returns the running one, once its DevTools
        /// endpoint answers (the server waits up to 30 s). windowSize is
        /// "W,H" (each 100 to 7680; "1280,720" when unset); urlTtl is how
        /// long the URLs' token lasts (an hour when unset, at most a day).
        /// Only a developer (or owner) gets URLs.
        /// </summary>
        public async Task<BrowserInfo> StartAsync(string windowSize = null, TimeSpan? urlTtl = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new M.StartBrowserRequest(urlTtl: Wire.Ttl(urlTtl), windowSize: Wire.NullIfEmpty(windowSize));
            var r = await _s.Conn.Call(ct => _s.Conn.Browsers.BrowserServiceStartBrowserAsync(_s.SandboxId, body, ct), cancellationToken)
                .ConfigureAwait(false);
            return BrowserInfo.Of(r == null ? null : r.Browser);
        }

        /// <summary>
        /// The browser's state, with fresh URLs (a new token, valid for
        /// urlTtl or an hour) when it runs: to hand a CDP URL out again
        /// after the first one expired. A viewer gets the state without URLs.
        /// </summary>
        public async Task<BrowserInfo> GetAsync(TimeSpan? urlTtl = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var ttl = Wire.Ttl(urlTtl);
            var r = await _s.Conn.Call(ct => _s.Conn.Browsers.BrowserServiceGetBrowserAsync(_s.SandboxId, ttl, ct), cancellationToken)
                .ConfigureAwait(false);
            return BrowserInfo.Of(r == null ? null : r.Browser);
        }

        /// <summary>
        /// Stops it, closing it through DevTools first so that it writes its
        /// profile out (then SIGTERM, then SIGKILL, 5 s apart); its URLs stop
        /// working. A browser that does not run is fine.
        /// </summary>
        public async Task<BrowserInfo> StopAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var r = await _s.Conn.Call(ct => _s.Conn.Browsers.BrowserServiceStopBrowserAsync(_s.SandboxId, new M.StopBrowserRequest(), ct),
                cancellationToken).ConfigureAwait(false);
            return BrowserInfo.Of(r == null ? null : r.Browser);
        }

        /// <summary>
        /// A PNG of the first page (the whole page, cut at 16,384 px, with
        /// fullPage); FailedPreconditionException when the browser does not run.
        /// </summary>
        public async Task<byte[]> ScreenshotAsync(bool fullPage = false, CancellationToken cancellationToken = default(CancellationToken)) =>
            (await TakeScreenshotAsync(fullPage, cancellationToken).ConfigureAwait(false)).Png;

        /// <summary>ScreenshotAsync with the page's URL and title, to know what the picture shows.</summary>
        public async Task<BrowserScreenshot> TakeScreenshotAsync(bool fullPage = false, CancellationToken cancellationToken = default(CancellationToken))
        {
            // fullPage only when set, as the Python SDK sends it.
            var full = fullPage ? true : (bool?)null;
            var r = await _s.Conn.Call(ct => _s.Conn.Browsers.BrowserServiceTakeScreenshotAsync(_s.SandboxId, full, ct), cancellationToken)
                .ConfigureAwait(false);
            return BrowserScreenshot.Of(r);
        }
    }

    /// <summary>Where a sandbox's browser is. Unknown: a state this SDK does not know yet (a newer server's).</summary>
    public enum BrowserState
    {
        Unknown,
        Starting,
        Running,
        /// <summary>Not running: never started, or stopped.</summary>
        Stopped,
        /// <summary>It ended on its own (killed, out of memory); BrowserInfo.Error says how.</summary>
        Crashed,
    }

    /// <summary>
    /// A sandbox's browser as the server described it. The URLs carry a
    /// token (until ExpiresAt; Browser.GetAsync gives fresh ones): whoever
    /// has one drives the browser. They are "" unless it runs and the
    /// caller may drive it.
    /// </summary>
    public sealed class BrowserInfo
    {
        public BrowserState State { get; private set; }
        /// <summary>
        /// The DevTools HTTP endpoint through the gateway
        /// ({url}/cdp/{sandbox}/{token}): what Playwright's
        /// connectOverCDP takes; its /json/version names the WebSocket.
        /// </summary>
        public string CdpUrl { get; private set; }
        /// <summary>The browser-level DevTools WebSocket through the gateway (ws:// or wss://): a CDP client's connection.</summary>
        public string WebSocketDebuggerUrl { get; private set; }
        /// <summary>A page that shows the browser's screen as it changes, for a person watching what an agent does.</summary>
        public string LiveViewUrl { get; private set; }
        /// <summary>When the URLs' token expires.</summary>
        public DateTimeOffset? ExpiresAt { get; private set; }
        public DateTimeOffset? StartedAt { get; private set; }
        /// <summary>Its pid inside the sandbox (0 when it does not run).</summary>
        public int Pid { get; private set; }
        /// <summary>The DevTools port on the sandbox's loopback (9222): no preview opens it.</summary>
        public int CdpPort { get; private set; }
        /// <summary>"W,H".</summary>
        public string WindowSize { get; private set; }
        /// <summary>How a crashed browser ended (exit code or signal, its last lines), or why it could not start.</summary>
        public string Error { get; private set; }
        public string SandboxId { get; private set; }

        public bool IsRunning => State == BrowserState.Running;

        internal static BrowserInfo Of(M.Browser b)
        {
            if (b == null)
                throw new TalonException("the server's answer has no browser");
            BrowserState state;
            var name = Wire.Tail(b.State, "BROWSER_STATE_");
            if (name.Length == 0 || name == "unspecified" || !Enum.TryParse(name, true, out state))
                state = BrowserState.Unknown;
            return new BrowserInfo
            {
                State = state,
                CdpUrl = b.CdpUrl ?? "",
                WebSocketDebuggerUrl = b.WebsocketDebuggerUrl ?? "",
                LiveViewUrl = b.LiveViewUrl ?? "",
                ExpiresAt = Wire.Time(b.ExpireTime),
                StartedAt = Wire.Time(b.StartTime),
                Pid = b.Pid,
                CdpPort = b.CdpPort,
                WindowSize = b.WindowSize ?? "",
                Error = b.Error ?? "",
                SandboxId = b.SandboxId ?? "",
            };
        }

        /// <summary>The URLs carry a credential: they are left out.</summary>
        public override string ToString() =>
            "BrowserInfo(" + State.ToString().ToLowerInvariant() + (Pid != 0 ? ", pid " + Pid : "") + (Error.Length > 0 ? ", " + Error : "") + ")";
    }

    /// <summary>A screenshot of the browser's first page (Browser.TakeScreenshotAsync).</summary>
    public sealed class BrowserScreenshot
    {
        /// <summary>The PNG file's bytes.</summary>
        public byte[] Png { get; private set; }
        /// <summary>The page's URL.</summary>
        public string Url { get; private set; }
        public string Title { get; private set; }

        internal static BrowserScreenshot Of(M.TakeScreenshotResponse r)
        {
            if (r == null || string.IsNullOrEmpty(r.Png))
                throw new TalonException("the server's screenshot answer has no png");
            byte[] png;
            try
            {
                png = Convert.FromBase64String(r.Png);
            }
            catch (FormatException e)
            {
                throw new TalonException("the server's screenshot is not base64: " + e.Message, inner: e);
            }
            return new BrowserScreenshot { Png = png, Url = r.Url ?? "", Title = r.Title ?? "" };
        }

        public override string ToString() => "BrowserScreenshot(" + Png.Length + " bytes, " + Url + ")";
    }
}
