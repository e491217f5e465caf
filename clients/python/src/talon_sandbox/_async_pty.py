"""`AsyncSandbox.pty`: `Sandbox.pty` for asyncio."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from . import _core as core
from ._async_commands import AsyncCommandHandle
from ._async_http import call
from ._endpoints import resize_pty

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox


class AsyncPtyHandle(AsyncCommandHandle):
    async def resize(self, cols: int, rows: int) -> None:
        await self._s.pty.resize(self.pid, cols, rows)


class AsyncPty:
    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def create(self, *, cols: int = 80, rows: int = 24, on_data: Optional[Callable[[bytes], Any]] = None,
                     cmd: Optional[str | list[str]] = None, envs: Optional[dict] = None,
                     cwd: Optional[str] = None, tag: Optional[str] = None, user: Optional[str] = None,
                     timeout: Optional[float] = None) -> AsyncPtyHandle:
        body = core.process_body(cmd or ["bash", "-l"], envs=envs, cwd=cwd, tag=tag, stdin=True,
                                 pty=(cols, rows), user=user, timeout=timeout)
        c = core.Collector((lambda s: on_data(s.encode())) if on_data else None)
        h = AsyncPtyHandle(self._s, c, tag, timeout)
        await h._start(self._s.commands._start_stream(body))
        return h

    async def connect(self, pid: int, *, on_data: Optional[Callable[[bytes], Any]] = None) -> AsyncPtyHandle:
        c = core.Collector((lambda s: on_data(s.encode())) if on_data else None)
        c.pid = pid
        h = AsyncPtyHandle(self._s, c, None)
        await h._start(self._s.commands._connect_stream(pid, None))
        return h

    async def resize(self, pid: int, cols: int, rows: int) -> None:
        await call(self._s._client, resize_pty, self._s.sandbox_id, str(pid),
                   body={"size": {"cols": cols, "rows": rows}})

    async def send_stdin(self, pid: int, data: bytes | str) -> None:
        await self._s.commands.send_stdin(pid, data)

    async def kill(self, pid: int) -> None:
        await self._s.commands.kill(pid)
