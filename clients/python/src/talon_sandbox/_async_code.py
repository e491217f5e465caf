"""`AsyncSandbox.code`: `Sandbox.code` for asyncio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from . import _core as core

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox


class AsyncCode:
    """`Sandbox.code` for asyncio."""

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

    async def run(self, code: str, *, language: Optional[str] = None, context: Any = None,
                  timeout: Optional[float] = None, on_stdout: Optional[Callable[[str], Any]] = None,
                  on_stderr: Optional[Callable[[str], Any]] = None,
                  on_result: Optional[Callable[[core.CodeResult], Any]] = None,
                  on_error: Optional[Callable[[core.CodeError], Any]] = None) -> core.Execution:
        f = core.CodeFollower(on_stdout, on_stderr, on_result, on_error)
        body = core.run_code_body(code, language, context, timeout)
        http = self._s._client.get_async_httpx_client()
        async with http.stream("POST", core.sandbox_path(self._s.sandbox_id, "/code:run"), json=body,
                               timeout=None) as resp:
            if not resp.is_success:
                await resp.aread()
                core.check(resp)
            async for line in resp.aiter_lines():
                if line.strip():
                    f.add(line)
        return f.result()

    async def create_context(self, language: str = "python", *, cwd: Optional[str] = None,
                             envs: Optional[dict] = None) -> core.CodeContext:
        body = core.context_body(language, cwd, envs)
        return core.code_context(await self._call("POST", "/code-contexts", json=body, timeout=90))

    async def list_contexts(self) -> list:
        body = await self._call("GET", "/code-contexts")
        return [core.code_context(c) for c in (body or {}).get("contexts", [])]

    async def restart_context(self, context: Any) -> core.CodeContext:
        from urllib.parse import quote
        cid = quote(core.context_id(context), safe="")
        return core.code_context(await self._call("POST", f"/code-contexts/{cid}:restart", json={}, timeout=90))

    async def interrupt(self, context: Any) -> None:
        from urllib.parse import quote
        await self._call("POST", f"/code-contexts/{quote(core.context_id(context), safe='')}:interrupt", json={})

    async def delete_context(self, context: Any) -> None:
        from urllib.parse import quote
        await self._call("DELETE", f"/code-contexts/{quote(core.context_id(context), safe='')}")
