"""The asyncio SDK: the same shape as `Sandbox`, every call awaited."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Callable, Optional

import httpx

from . import _core as core
from ._api.client import AuthenticatedClient
from ._core import CommandResult, FileInfo, FilesystemEvent, SandboxInfo
from .sandbox import (
    _body,
    close_stdin,
    close_stdin_tag,
    create_sandbox,
    delete_sandbox,
    get_sandbox,
    list_dir,
    list_processes,
    list_sandboxes,
    make_dir,
    move_path,
    pause_sandbox,
    preview_token,
    remove_path,
    resize_pty,
    resume_sandbox,
    send_signal,
    send_signal_tag,
    set_timeout,
    stat_path,
    who_am_i,
)


async def call(client: AuthenticatedClient, mod: Any, *args: Any, body: Optional[dict] = None, **kw: Any) -> dict:
    kw = {k: v for k, v in kw.items() if v is not None}
    try:
        resp = await mod.asyncio_detailed(*args, client=client, **_body(mod, body), **kw)
    except ValueError as e:  # the generated layer met an answer that is not JSON
        raise core.not_json(e) from e
    return core.parsed(resp)


async def _lines(resp: httpx.Response) -> AsyncIterator[core.Event]:
    if not resp.is_success:
        await resp.aread()
        core.check(resp)
    async for line in resp.aiter_lines():
        if line.strip():
            yield core.event_of(line)


class AsyncCommandHandle:
    """A background process; `await wait()` gives its result."""

    def __init__(self, sandbox: "AsyncSandbox", collector: core.Collector, tag: Optional[str]) -> None:
        self._s = sandbox
        self._c = collector
        self.tag = tag
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

    async def wait(self, timeout: Optional[float] = None) -> CommandResult:
        assert self._task is not None
        await asyncio.wait_for(asyncio.shield(self._task), timeout)
        return self._c.result()

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

    async def run(self, cmd: str | list[str], *, background: bool = False, envs: Optional[dict] = None,
                  cwd: Optional[str] = None, timeout: Optional[float] = None, tag: Optional[str] = None,
                  stdin: Optional[bytes | str] = None, user: Optional[str] = None,
                  on_stdout: Optional[Callable[[str], Any]] = None,
                  on_stderr: Optional[Callable[[str], Any]] = None) -> CommandResult | AsyncCommandHandle:
        body = core.process_body(cmd, envs=envs, cwd=cwd, timeout=timeout, tag=tag,
                                 stdin=stdin is not None, user=user)
        c = core.Collector(on_stdout, on_stderr)
        if background or stdin is not None:
            h = await AsyncCommandHandle(self._s, c, tag)._start(self._start_stream(body))
            if stdin is not None:
                if stdin:
                    await h.send_stdin(stdin)
                await h.close_stdin()
            return h if background else await h.wait()
        async for e in self._start_stream(body):
            c.add(e)
        return c.result()

    async def connect(self, pid: Optional[int] = None, *, tag: Optional[str] = None,
                      on_stdout: Optional[Callable[[str], Any]] = None,
                      on_stderr: Optional[Callable[[str], Any]] = None) -> AsyncCommandHandle:
        async def events() -> AsyncIterator[core.Event]:
            http = self._s._client.get_async_httpx_client()
            path = core.process_path(self._s.sandbox_id, pid, tag, ":connect")
            async with http.stream("GET", path) as resp:
                async for e in _lines(resp):
                    yield e

        c = core.Collector(on_stdout, on_stderr)
        c.pid = pid or 0
        return await AsyncCommandHandle(self._s, c, tag)._start(events())

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


class AsyncFiles:
    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def write(self, path: str, data: bytes | str, *, mode: int = 0, create_parents: bool = True) -> FileInfo:
        raw = data.encode() if isinstance(data, str) else data
        params = {"path": path, "create_parents": str(create_parents).lower()}
        if mode:
            params["mode"] = str(mode)
        http = self._s._client.get_async_httpx_client()
        resp = await http.post(core.sandbox_path(self._s.sandbox_id, "/files:write"), params=params,
                               content=raw, headers={"content-type": "application/octet-stream"})
        core.check(resp)
        return FileInfo.of(resp.json().get("info", {}))

    async def read(self, path: str, *, format: str = "text") -> str | bytes:
        http = self._s._client.get_async_httpx_client()
        resp = await http.get(core.sandbox_path(self._s.sandbox_id, "/files:read"), params={"path": path},
                              headers={"accept": "application/octet-stream"})
        core.check(resp)
        return resp.content if format == "bytes" else resp.content.decode("utf-8")

    async def list(self, path: str = ".", depth: int = 1) -> list[FileInfo]:
        r = await call(self._s._client, list_dir, self._s.sandbox_id, path=path, depth=depth)
        return [FileInfo.of(e) for e in r.get("entries", [])]

    async def stat(self, path: str) -> FileInfo:
        r = await call(self._s._client, stat_path, self._s.sandbox_id, path=path)
        return FileInfo.of(r.get("info", {}))

    async def exists(self, path: str) -> bool:
        try:
            await self.stat(path)
            return True
        except core.errors.NotFoundError:
            return False

    async def make_dir(self, path: str, parents: bool = True) -> None:
        await call(self._s._client, make_dir, self._s.sandbox_id, body={"path": path, "parents": parents})

    async def rename(self, old: str, new: str) -> None:
        await call(self._s._client, move_path, self._s.sandbox_id,
                   body={"sourcePath": old, "destinationPath": new})

    async def remove(self, path: str, recursive: bool = False) -> None:
        await call(self._s._client, remove_path, self._s.sandbox_id, path=path, recursive=recursive)

    async def watch(self, path: str, recursive: bool = False) -> AsyncIterator[FilesystemEvent]:
        """Yields changes under `path` until the loop breaks."""
        http = self._s._client.get_async_httpx_client()
        async with http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                               params={"path": path, "recursive": str(recursive).lower()}) as resp:
            if not resp.is_success:
                await resp.aread()
                core.check(resp)
            async for line in resp.aiter_lines():
                if line.strip():
                    d = json.loads(line)
                    t = str(d.get("type", "")).removeprefix("FILE_EVENT_TYPE_").lower()
                    yield FilesystemEvent(t, d.get("path", ""))


class AsyncPtyHandle(AsyncCommandHandle):
    async def resize(self, cols: int, rows: int) -> None:
        await call(self._s._client, resize_pty, self._s.sandbox_id, str(self.pid),
                   body={"size": {"cols": cols, "rows": rows}})


class AsyncPty:
    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def create(self, *, cols: int = 80, rows: int = 24, on_data: Optional[Callable[[bytes], Any]] = None,
                     cmd: Optional[str | list[str]] = None, envs: Optional[dict] = None,
                     cwd: Optional[str] = None, tag: Optional[str] = None) -> AsyncPtyHandle:
        body = core.process_body(cmd or ["bash", "-l"], envs=envs, cwd=cwd, tag=tag, stdin=True,
                                 pty=(cols, rows))
        c = core.Collector((lambda s: on_data(s.encode())) if on_data else None)
        h = AsyncPtyHandle(self._s, c, tag)
        await h._start(self._s.commands._start_stream(body))
        return h


class AsyncSandbox:
    def __init__(self, info: SandboxInfo, client: AuthenticatedClient, config: core.Config) -> None:
        self._info = info
        self._client = client
        self._config = config
        self.commands = AsyncCommands(self)
        self.files = AsyncFiles(self)
        self.pty = AsyncPty(self)

    @property
    def sandbox_id(self) -> str:
        return self._info.sandbox_id

    @classmethod
    async def create(cls, image: str = "host", *, envs: Optional[dict] = None, timeout: Optional[float] = None,
                     cpu_millis: Optional[int] = None, memory_mib: Optional[int] = None,
                     labels: Optional[dict] = None, secrets: Optional[list[str]] = None, wait: bool = True,
                     wait_timeout: float = 60, api_key: Optional[str] = None, base_url: Optional[str] = None,
                     request_timeout: float = 60.0) -> "AsyncSandbox":
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.async_client()
        body = core.create_body(image, envs, timeout, cpu_millis, memory_mib, labels, secrets)
        r = await call(client, create_sandbox, body=body, wait_until_running=wait or None,
                       wait_timeout=f"{float(wait_timeout):g}s" if wait else None)
        return cls(SandboxInfo.of(r["sandbox"]), client, config)

    @classmethod
    async def connect(cls, sandbox_id: str, *, api_key: Optional[str] = None, base_url: Optional[str] = None,
                      request_timeout: float = 60.0) -> "AsyncSandbox":
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.async_client()
        r = await call(client, get_sandbox, sandbox_id)
        return cls(SandboxInfo.of(r["sandbox"]), client, config)

    @staticmethod
    async def list(*, page_size: Optional[int] = None, page_token: Optional[str] = None,
                   api_key: Optional[str] = None, base_url: Optional[str] = None) -> tuple[list[SandboxInfo], str]:
        client = core.Config(api_key, base_url).async_client()
        r = await call(client, list_sandboxes, page_size=page_size, page_token=page_token)
        return [SandboxInfo.of(s) for s in r.get("sandboxes", [])], r.get("nextPageToken", "")

    async def info(self) -> SandboxInfo:
        self._info = SandboxInfo.of((await call(self._client, get_sandbox, self.sandbox_id))["sandbox"])
        return self._info

    async def pause(self) -> None:
        await call(self._client, pause_sandbox, self.sandbox_id, body={})

    async def resume(self) -> None:
        await call(self._client, resume_sandbox, self.sandbox_id, body={})

    async def kill(self) -> None:
        await call(self._client, delete_sandbox, self.sandbox_id)

    async def set_timeout(self, seconds: float) -> None:
        await call(self._client, set_timeout, self.sandbox_id, body={"timeout": f"{float(seconds):g}s"})

    async def preview_url(self, port: int, *, ttl: Optional[float] = None, path: bool = False) -> str:
        """A link to the port's preview that opens with no other credential:
        it carries a fresh preview token (valid ``ttl`` seconds, or the
        server's default), which the gateway trades for a cookie of that
        preview only. In the form the gateway serves by default: a
        subdomain (``http://PORT-ID.localhost:8080/`` on loopback), where
        apps with root-absolute asset paths work; ``path=True`` gives the
        path form (``/preview/ID/PORT/``), for clients that can't resolve
        ``*.localhost``. ``preview_address`` is the bare path address,
        which needs an Authorization header."""
        r = await self.preview_token(port, ttl)
        return core.preview_link(self._config.base_url or core.DEFAULT_URL, self.sandbox_id, port, r, path)

    def preview_address(self, port: int) -> str:
        """The unsigned path-prefix address of a port's preview."""
        return core.preview_url(self._config.base_url or core.DEFAULT_URL, self.sandbox_id, port)

    async def preview_token(self, port: int, ttl: Optional[float] = None) -> dict:
        body: dict[str, Any] = {"port": port}
        if ttl:
            body["ttl"] = f"{float(ttl):g}s"
        return await call(self._client, preview_token, self.sandbox_id, body=body)

    async def whoami(self) -> dict:
        return await call(self._client, who_am_i)

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.kill()
        except core.errors.NotFoundError:
            pass
