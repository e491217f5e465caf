using System.Threading;

namespace Talon
{
    // The sandbox's code contexts and browser: the Python SDK's sbx.code
    // and sbx.browser. Made on first use, so that a Sandbox that never runs
    // code or a browser costs nothing for them (and Sandbox.cs's
    // constructor need not know of them).
    public sealed partial class Sandbox
    {
        Code _code;
        Browser _browser;

        /// <summary>Code run in contexts (kernels that keep their state): RunAsync, CreateContextAsync, InterruptAsync, …</summary>
        public Code Code => LazyInitializer.EnsureInitialized(ref _code, () => new Code(this));

        /// <summary>The sandbox's Chromium: StartAsync (its CDP and live view URLs), GetAsync, StopAsync, ScreenshotAsync.</summary>
        public Browser Browser => LazyInitializer.EnsureInitialized(ref _browser, () => new Browser(this));
    }
}
