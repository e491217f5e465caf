"""`AsyncSandbox.agent`: `Sandbox.agent` for asyncio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import httpx

from . import _core as core

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox


class AsyncAgent:
    """`Sandbox.agent` for asyncio: the same runs, reattached the same way."""

    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def _follow(self, method: str, path: str, f: core.AgentFollower, **kw: Any) -> None:
        http = self._s._client.get_async_httpx_client()
        async with http.stream(method, path, timeout=None, **kw) as resp:
            if not resp.is_success:
                await resp.aread()
                core.check(resp)
            async for line in resp.aiter_lines():
                if line.strip():
                    f.add(core.agent_event(line))

    async def run(self, command: str | list[str], prompt: str = "", *, envs: Optional[dict] = None,
                  cwd: Optional[str] = None, user: Optional[str] = None, secrets: Optional[list[str]] = None,
                  timeout: Optional[float] = None, on_event: Optional[Callable[[core.AgentEvent], Any]] = None,
                  reattach: int = 3) -> core.AgentRun:
        f = core.AgentFollower(on_event)
        body = core.agent_body(command, prompt, envs, cwd, user, secrets, timeout)
        try:
            await self._follow("POST", core.sandbox_path(self._s.sandbox_id, "/agent:run"), f, json=body)
        except httpx.TransportError:
            if not f.run_id:
                raise
        tries = 0
        while f.done is None and tries < reattach and f.run_id:
            tries += 1
            try:
                await self._follow("GET", self._run_path(f.run_id, ":connect"), f,
                                   params={"afterSeq": str(f.last_seq)})
            except httpx.TransportError:
                continue
        return f.result()

    async def connect(self, run_id: str, *, after_seq: int = 0,
                      on_event: Optional[Callable[[core.AgentEvent], Any]] = None) -> core.AgentRun:
        f = core.AgentFollower(on_event)
        f.run_id, f.last_seq = run_id, after_seq
        await self._follow("GET", self._run_path(run_id, ":connect"), f, params={"afterSeq": str(after_seq)})
        return f.result()

    async def cancel(self, run_id: str) -> None:
        http = self._s._client.get_async_httpx_client()
        resp = await http.post(self._run_path(run_id, ":cancel"), json={})
        core.check(resp)

    def _run_path(self, run_id: str, verb: str) -> str:
        from urllib.parse import quote
        return core.sandbox_path(self._s.sandbox_id, f"/agent-runs/{quote(run_id, safe='')}{verb}")
