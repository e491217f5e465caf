"""`AsyncSandbox.browser`: `Sandbox.browser` for asyncio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from . import _core as core

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox


class AsyncBrowser:
    """`Sandbox.browser` for asyncio."""

    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def _call(self, method: str, rest: str, **kw: Any) -> Any:
        http = self._s._client.get_async_httpx_client()
        resp = await http.request(method, core.sandbox_path(self._s.sandbox_id, rest), **kw)
        try:
            body = resp.json() if resp.content else None
        except ValueError:
            body = resp.text
        core.check(resp, body)
        return body

    async def start(self, *, window_size: Optional[str] = None,
                    url_ttl: Optional[float] = None) -> core.BrowserInfo:
        body = core.browser_start_body(window_size, url_ttl)
        return core.browser_info(await self._call("POST", "/browser:start", json=body, timeout=60))

    async def get(self) -> core.BrowserInfo:
        return core.browser_info(await self._call("GET", "/browser"))

    async def stop(self) -> core.BrowserInfo:
        return core.browser_info(await self._call("POST", "/browser:stop", json={}, timeout=30))

    async def screenshot(self, *, full_page: bool = False) -> bytes:
        params = {"fullPage": "true"} if full_page else {}
        return core.screenshot_png(await self._call("GET", "/browser/screenshot", params=params, timeout=60))
