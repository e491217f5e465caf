"""`AsyncSandbox.commands`: `Sandbox.commands` for asyncio."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Optional

from . import _core as core
from ._async_http import _lines, call
from ._core import CommandResult
from ._endpoints import close_stdin, close_stdin_tag, list_processes, send_signal, send_signal_tag

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox


class AsyncCommandHandle:
    """A background process; `await wait()` gives its result (raising
    CommandExitError on a non-zero exit, like a foreground `run`)."""

    def __init__(self, sandbox: "AsyncSandbox", collector: core.Collector, tag: Optional[str],
                 timeout: Optional[float] = None) -> None:
        self._s = sandbox
        self._c = collector
        self.tag = tag
        self._timeout = timeout
        self._disconnected = False
        self._started = asyncio.Event()
        self._task: Optional[asyncio.Task] = None

    async def _run(self, events: AsyncIterator[core.Event]) -> None:
        try:
            async for e in events:
                self._c.add(e)
                if self._c.pid or e.kind == "exited":
                    self._started.set()
        finally:
            self._started.set()

    async def _start(self, events: AsyncIterator[core.Event]) -> "AsyncCommandHandle":
        self._task = asyncio.create_task(self._run(events))
        waiter = asyncio.create_task(self._started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done() and self._task.exception():
            raise self._task.exception()  # type: ignore[misc]
        return self

    @property
    def pid(self) -> int:
        return self._c.pid

    @property
    def stdout(self) -> str:
        return self._c.out.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self._c.err.decode("utf-8", "replace")

    async def wait(self, timeout: Optional[float] = None) -> CommandResult:
        assert self._task is not None
        if self._disconnected:
            raise core.errors.TalonError("this handle was disconnected; commands.connect(pid) follows it again")
        await asyncio.wait_for(asyncio.shield(self._task), timeout)
        return core.finish(self._c.result(), self._timeout)

    async def disconnect(self) -> None:
        """Stops following the process; it keeps running in the sandbox."""
        self._disconnected = True
        if self._task:
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass

    async def kill(self, signal: int = 9) -> None:
        await self._s.commands.kill(self.pid, signal=signal)

    async def send_stdin(self, data: bytes | str) -> None:
        await self._s.commands.send_stdin(self.pid, data)

    async def close_stdin(self) -> None:
        await self._s.commands.close_stdin(self.pid)


class AsyncCommands:
    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def _start_stream(self, body: dict) -> AsyncIterator[core.Event]:
        http = self._s._client.get_async_httpx_client()
        async with http.stream("POST", core.sandbox_path(self._s.sandbox_id, "/processes"), json=body) as resp:
            async for e in _lines(resp):
                yield e

    async def _connect_stream(self, pid: Optional[int], tag: Optional[str]) -> AsyncIterator[core.Event]:
        http = self._s._client.get_async_httpx_client()
        path = core.process_path(self._s.sandbox_id, pid, tag, ":connect")
        async with http.stream("GET", path) as resp:
            async for e in _lines(resp):
                yield e

    async def run(self, cmd: str | list[str], *, background: bool = False, envs: Optional[dict] = None,
                  cwd: Optional[str] = None, timeout: Optional[float] = core.DEFAULT_COMMAND_TIMEOUT,
                  tag: Optional[str] = None, stdin: Optional[bytes | str] = None, user: Optional[str] = None,
                  on_stdout: Optional[Callable[[str], Any]] = None,
                  on_stderr: Optional[Callable[[str], Any]] = None) -> CommandResult | AsyncCommandHandle:
        """As `Sandbox.commands.run`: raises CommandExitError on a non-zero
        exit and CommandTimeoutError past `timeout`."""
        limit = None if background and timeout == core.DEFAULT_COMMAND_TIMEOUT else (timeout or None)
        body = core.process_body(cmd, envs=envs, cwd=cwd, timeout=limit, tag=tag,
                                 stdin=stdin is not None, user=user)
        c = core.Collector(on_stdout, on_stderr)
        if background or stdin is not None:
            h = await AsyncCommandHandle(self._s, c, tag, limit)._start(self._start_stream(body))
            if stdin is not None:
                if stdin:
                    await h.send_stdin(stdin)
                await h.close_stdin()
            return h if background else await h.wait()
        async for e in self._start_stream(body):
            c.add(e)
        return core.finish(c.result(), limit)

    async def connect(self, pid: Optional[int] = None, *, tag: Optional[str] = None,
                      on_stdout: Optional[Callable[[str], Any]] = None,
                      on_stderr: Optional[Callable[[str], Any]] = None) -> AsyncCommandHandle:
        c = core.Collector(on_stdout, on_stderr)
        c.pid = pid or 0
        return await AsyncCommandHandle(self._s, c, tag)._start(self._connect_stream(pid, tag))

    async def list(self, include_exited: bool = False) -> list[dict]:
        r = await call(self._s._client, list_processes, self._s.sandbox_id, include_exited=include_exited)
        return r.get("processes", [])

    async def kill(self, pid: Optional[int] = None, *, tag: Optional[str] = None, signal: int = 9) -> None:
        if tag:
            await call(self._s._client, send_signal_tag, self._s.sandbox_id, tag, body={"signal": signal})
        else:
            await call(self._s._client, send_signal, self._s.sandbox_id, str(pid), body={"signal": signal})

    async def send_stdin(self, pid: int, data: bytes | str, *, tag: Optional[str] = None) -> None:
        raw = data.encode() if isinstance(data, str) else data
        http = self._s._client.get_async_httpx_client()
        resp = await http.post(core.process_path(self._s.sandbox_id, pid, tag, ":input"), content=raw,
                               headers={"content-type": "application/octet-stream"})
        core.check(resp)

    async def close_stdin(self, pid: int, *, tag: Optional[str] = None) -> None:
        if tag:
            await call(self._s._client, close_stdin_tag, self._s.sandbox_id, tag, body={})
        else:
            await call(self._s._client, close_stdin, self._s.sandbox_id, str(pid), body={})
