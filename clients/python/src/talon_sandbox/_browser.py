"""`Sandbox.browser`: the sandbox's Chromium, started, stopped and
screenshotted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from . import _core as core
from ._http import _read_json

if TYPE_CHECKING:
    from .sandbox import Sandbox


class Browser:
    """The sandbox's Chromium (headless, its profile in the workspace).
    `start()` returns its `BrowserInfo`; drive it with Playwright
    (`chromium.connect_over_cdp(info.cdp_url)`) or Puppeteer."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def _call(self, method: str, rest: str, **kw: Any) -> Any:
        http = self._s._client.get_httpx_client()
        resp = http.request(method, core.sandbox_path(self._s.sandbox_id, rest), **kw)
        body = _read_json(resp)
        core.check(resp, body)
        return body

    def start(self, *, window_size: Optional[str] = None, url_ttl: Optional[float] = None) -> core.BrowserInfo:
        """Starts the browser (or returns the running one) once its
        DevTools answer. `window_size` is "W,H"; `url_ttl` is how long the
        URLs' token lasts, in seconds (1 h by default)."""
        body = core.browser_start_body(window_size, url_ttl)
        return core.browser_info(self._call("POST", "/browser:start", json=body, timeout=60))

    def get(self) -> core.BrowserInfo:
        """The browser's state, with fresh URLs when it runs."""
        return core.browser_info(self._call("GET", "/browser"))

    def stop(self) -> core.BrowserInfo:
        """Stops it, letting it write its profile out first."""
        return core.browser_info(self._call("POST", "/browser:stop", json={}, timeout=30))

    def screenshot(self, *, full_page: bool = False) -> bytes:
        """A PNG of the active page."""
        params = {"fullPage": "true"} if full_page else {}
        return core.screenshot_png(self._call("GET", "/browser/screenshot", params=params, timeout=60))
