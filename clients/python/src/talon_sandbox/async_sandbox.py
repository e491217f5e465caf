"""The asyncio SDK: the same shape as `Sandbox`, every call awaited."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Callable, Optional

import httpx

from . import _core as core
from ._api.client import AuthenticatedClient
from ._core import (
    CommandResult,
    FileInfo,
    FilesystemEvent,
    SandboxInfo,
    SandboxMetrics,
    SnapshotInfo,
    WriteEntry,
)
from .sandbox import (
    _body,
    _user,
    close_stdin,
    close_stdin_tag,
    create_file_url,
    create_sandbox,
    create_snapshot,
    delete_sandbox,
    delete_snapshot,
    fork_sandbox,
    get_snapshot,
    get_metrics,
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
    start_sandbox,
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


class AsyncWatchHandle:
    """A running watch: events go to the callback, if given, and to
    `get_new_events()`; `await stop()` ends it."""

    def __init__(self, events: AsyncIterator[FilesystemEvent],
                 on_event: Optional[Callable[[FilesystemEvent], Any]]) -> None:
        self._events: list[FilesystemEvent] = []
        self._on_event = on_event
        self.error: Optional[BaseException] = None
        self._task = asyncio.create_task(self._read(events))

    async def _read(self, events: AsyncIterator[FilesystemEvent]) -> None:
        try:
            async for ev in events:
                self._events.append(ev)
                if self._on_event:
                    r = self._on_event(ev)
                    if asyncio.iscoroutine(r):
                        await r
        except asyncio.CancelledError:
            pass
        except Exception as e:
            self.error = e

    def get_new_events(self) -> list[FilesystemEvent]:
        out, self._events = self._events, []
        return out

    async def stop(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except BaseException:
            pass


class AsyncFiles:
    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def write(self, path: str, data: bytes | str | Any, *, mode: int = 0, create_parents: bool = True,
                    user: Optional[str] = None) -> FileInfo:
        raw = data.encode() if isinstance(data, str) else data
        params = _user({"path": path, "create_parents": str(create_parents).lower()}, user)
        if mode:
            params["mode"] = str(mode)
        http = self._s._client.get_async_httpx_client()
        resp = await http.post(core.sandbox_path(self._s.sandbox_id, "/files:write"), params=params,
                               content=raw, headers={"content-type": "application/octet-stream"})
        core.check(resp)
        return FileInfo.of(resp.json().get("info", {}))

    async def write_files(self, files: list[WriteEntry | dict], *, user: Optional[str] = None) -> list[FileInfo]:
        out = []
        for f in files:
            path, data = (f.path, f.data) if isinstance(f, WriteEntry) else (f["path"], f["data"])
            out.append(await self.write(path, data, user=user))
        return out

    async def read(self, path: str, *, format: str = "text",
                   user: Optional[str] = None) -> str | bytes | AsyncIterator[bytes]:
        if format not in ("text", "bytes", "stream"):
            raise core.errors.InvalidArgumentError(f"format is 'text', 'bytes' or 'stream', not {format!r}")
        http = self._s._client.get_async_httpx_client()
        url = core.sandbox_path(self._s.sandbox_id, "/files:read")
        params = _user({"path": path}, user)
        headers = {"accept": "application/octet-stream"}
        if format == "stream":
            async def chunks() -> AsyncIterator[bytes]:
                async with http.stream("GET", url, params=params, headers=headers) as resp:
                    if not resp.is_success:
                        await resp.aread()
                        core.check(resp)
                    async for chunk in resp.aiter_bytes():
                        yield chunk

            return chunks()
        resp = await http.get(url, params=params, headers=headers)
        core.check(resp)
        return resp.content if format == "bytes" else resp.content.decode("utf-8")

    async def list(self, path: str = ".", depth: int = 1, *, user: Optional[str] = None) -> list[FileInfo]:
        r = await call(self._s._client, list_dir, self._s.sandbox_id, path=path, depth=depth, user=user)
        return [FileInfo.of(e) for e in r.get("entries", [])]

    async def stat(self, path: str, *, user: Optional[str] = None) -> FileInfo:
        r = await call(self._s._client, stat_path, self._s.sandbox_id, path=path, user=user)
        return FileInfo.of(r.get("info", {}))

    get_info = stat

    async def exists(self, path: str, *, user: Optional[str] = None) -> bool:
        try:
            await self.stat(path, user=user)
            return True
        except core.errors.NotFoundError:
            return False

    async def make_dir(self, path: str, parents: bool = True, *, user: Optional[str] = None) -> None:
        await call(self._s._client, make_dir, self._s.sandbox_id,
                   body=_user({"path": path, "parents": parents}, user))

    async def rename(self, old: str, new: str, *, user: Optional[str] = None) -> None:
        await call(self._s._client, move_path, self._s.sandbox_id,
                   body=_user({"sourcePath": old, "destinationPath": new}, user))

    async def remove(self, path: str, recursive: bool = False, *, user: Optional[str] = None) -> None:
        await call(self._s._client, remove_path, self._s.sandbox_id, path=path, recursive=recursive, user=user)

    async def _watch_stream(self, path: str, recursive: bool, user: Optional[str]) -> AsyncIterator[FilesystemEvent]:
        http = self._s._client.get_async_httpx_client()
        async with http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                               params=_user({"path": path, "recursive": str(recursive).lower()}, user)) as resp:
            if not resp.is_success:
                await resp.aread()
                core.check(resp)
            async for line in resp.aiter_lines():
                if line.strip():
                    yield core.fs_event(line)

    async def watch_dir(self, path: str, on_event: Optional[Callable[[FilesystemEvent], Any]] = None, *,
                        recursive: bool = False, user: Optional[str] = None) -> AsyncWatchHandle:
        """Watches `path` until `await stop()`: poll `get_new_events()`, or
        pass `on_event` (a function or a coroutine function)."""
        http = self._s._client.get_async_httpx_client()
        ctx = http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                          params=_user({"path": path, "recursive": str(recursive).lower()}, user))
        # Open (or be refused) before returning, so no change made after
        # this call returns is missed.
        resp = await ctx.__aenter__()
        if not resp.is_success:
            await resp.aread()
            await ctx.__aexit__(None, None, None)
            core.check(resp)

        async def events() -> AsyncIterator[FilesystemEvent]:
            try:
                async for line in resp.aiter_lines():
                    if line.strip():
                        yield core.fs_event(line)
            finally:
                await ctx.__aexit__(None, None, None)

        return AsyncWatchHandle(events(), on_event)

    async def watch(self, path: str, recursive: bool = False) -> AsyncIterator[FilesystemEvent]:
        """Yields changes under `path` until the loop breaks."""
        async for ev in self._watch_stream(path, recursive, None):
            yield ev


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


class AsyncSandbox:
    def __init__(self, info: SandboxInfo, client: AuthenticatedClient, config: core.Config) -> None:
        self._info = info
        self._client = client
        self._config = config
        self.commands = AsyncCommands(self)
        self.files = AsyncFiles(self)
        self.pty = AsyncPty(self)
        self.agent = AsyncAgent(self)
        self.browser = AsyncBrowser(self)
        self.code = AsyncCode(self)

    @property
    def sandbox_id(self) -> str:
        return self._info.sandbox_id

    @classmethod
    async def create(cls, image: Optional[str] = None, *, template: Optional[str] = None,
                     envs: Optional[dict] = None, timeout: Optional[float] = None, metadata: Optional[dict] = None,
                     allow_internet_access: Optional[bool] = None, network: Optional[dict] = None,
                     on_timeout: Optional[str] = None, idempotency_key: Optional[str] = None,
                     idle_timeout: Optional[float] = None, auto_resume: Optional[bool] = None,
                     cpu_millis: Optional[int] = None, memory_mib: Optional[int] = None,
                     labels: Optional[dict] = None, secrets: Optional[list[str]] = None, wait: bool = True,
                     wait_timeout: float = 60, api_key: Optional[str] = None, base_url: Optional[str] = None,
                     request_timeout: float = 60.0, snapshot_id: Optional[str] = None,
               isolation: Optional[str] = None) -> "AsyncSandbox":
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.async_client()
        body = core.create_body(image or template or ("" if snapshot_id else "host"), envs, timeout, cpu_millis,
                                memory_mib, labels, secrets, metadata, allow_internet_access, network,
                                on_timeout, idle_timeout, auto_resume, snapshot_id, isolation)
        r = await call(client, create_sandbox, body=body, wait_until_running=wait or None,
                       wait_timeout=f"{float(wait_timeout):g}s" if wait else None,
                       idempotency_key=idempotency_key)
        return cls(SandboxInfo.of(r["sandbox"]), client, config)

    @classmethod
    async def connect(cls, sandbox_id: str, *, timeout: Optional[float] = None, api_key: Optional[str] = None,
                      base_url: Optional[str] = None, request_timeout: float = 60.0) -> "AsyncSandbox":
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.async_client()
        info = SandboxInfo.of((await call(client, get_sandbox, sandbox_id))["sandbox"])
        core.connectable(info)
        if info.state == "paused":
            await call(client, resume_sandbox, sandbox_id, body={})
        elif info.state == "stopped":
            await call(client, start_sandbox, sandbox_id, body={})
        if timeout:
            await call(client, set_timeout, sandbox_id, body={"timeout": f"{float(timeout):g}s"})
        sbx = cls(info, client, config)
        if info.state != "running" or timeout:
            await sbx.info()
        return sbx

    @staticmethod
    async def list(*, metadata: Optional[dict] = None, state: Optional[list[str] | str] = None,
                   page_size: Optional[int] = None, page_token: Optional[str] = None, limit: Optional[int] = None,
                   next_token: Optional[str] = None, api_key: Optional[str] = None,
                   base_url: Optional[str] = None) -> tuple[list[SandboxInfo], str]:
        client = core.Config(api_key, base_url).async_client()
        params = core.list_params(metadata, state, page_size or limit, page_token or next_token)
        return core.page(await client.get_async_httpx_client().get("/v1/sandboxes", params=params), "sandboxes", SandboxInfo.of)

    async def info(self) -> SandboxInfo:
        self._info = SandboxInfo.of((await call(self._client, get_sandbox, self.sandbox_id))["sandbox"])
        return self._info

    @staticmethod
    async def _info_by_id(sandbox_id: str, *, api_key: Optional[str] = None,
                          base_url: Optional[str] = None) -> SandboxInfo:
        client = core.Config(api_key, base_url).async_client()
        return SandboxInfo.of((await call(client, get_sandbox, sandbox_id))["sandbox"])

    get_info = core.either(info, _info_by_id)

    async def is_running(self) -> bool:
        return (await self.info()).state == "running"

    async def pause(self) -> None:
        await call(self._client, pause_sandbox, self.sandbox_id, body={})

    async def resume(self) -> None:
        await call(self._client, resume_sandbox, self.sandbox_id, body={})

    async def _kill(self) -> bool:
        try:
            await call(self._client, delete_sandbox, self.sandbox_id)
            return True
        except core.errors.NotFoundError:
            return False

    @staticmethod
    async def _kill_by_id(sandbox_id: str, *, api_key: Optional[str] = None,
                          base_url: Optional[str] = None) -> bool:
        try:
            await call(core.Config(api_key, base_url).async_client(), delete_sandbox, sandbox_id)
            return True
        except core.errors.NotFoundError:
            return False

    kill = core.either(_kill, _kill_by_id)

    async def create_snapshot(self, name: Optional[str] = None) -> SnapshotInfo:
        """See `Sandbox.create_snapshot`."""
        body = {"name": name} if name else {}
        return SnapshotInfo.of(await call(self._client, create_snapshot, self.sandbox_id, body=body))

    async def fork(self, count: int = 1) -> list["AsyncSandbox"]:
        """See `Sandbox.fork`."""
        r = await call(self._client, fork_sandbox, self.sandbox_id, body={"count": count})
        return [AsyncSandbox(SandboxInfo.of(s), self._client, self._config) for s in r.get("sandboxes", [])]

    @staticmethod
    async def list_snapshots(*, sandbox_id: Optional[str] = None, page_size: Optional[int] = None,
                             page_token: Optional[str] = None, api_key: Optional[str] = None,
                             base_url: Optional[str] = None) -> tuple[list[SnapshotInfo], str]:
        client = core.Config(api_key, base_url).async_client()
        params = core.page_params(page_size, page_token, sandboxId=sandbox_id)
        return core.page(await client.get_async_httpx_client().get("/v1/snapshots", params=params), "snapshots", SnapshotInfo.of)

    @staticmethod
    async def get_snapshot(snapshot_id: str, *, api_key: Optional[str] = None,
                           base_url: Optional[str] = None) -> SnapshotInfo:
        client = core.Config(api_key, base_url).async_client()
        return SnapshotInfo.of(await call(client, get_snapshot, snapshot_id))

    @staticmethod
    async def delete_snapshot(snapshot_id: str, *, api_key: Optional[str] = None,
                              base_url: Optional[str] = None) -> None:
        await call(core.Config(api_key, base_url).async_client(), delete_snapshot, snapshot_id)

    async def set_timeout(self, seconds: float) -> None:
        await call(self._client, set_timeout, self.sandbox_id, body={"timeout": f"{float(seconds):g}s"})

    async def get_metrics(self) -> list[SandboxMetrics]:
        return [SandboxMetrics.of(await call(self._client, get_metrics, self.sandbox_id))]

    async def get_host(self, port: int, *, ttl: Optional[float] = None) -> str:
        return await self.preview_url(port, ttl=ttl)

    async def _file_url(self, path: str, op: str, ttl: Optional[float]) -> str:
        body = core.with_ttl({"path": path, "operation": op}, ttl)
        return (await call(self._client, create_file_url, self.sandbox_id, body=body))["url"]

    async def download_url(self, path: str, *, ttl: Optional[float] = None) -> str:
        return await self._file_url(path, "FILE_URL_OPERATION_READ", ttl)

    async def upload_url(self, path: str, *, ttl: Optional[float] = None) -> str:
        return await self._file_url(path, "FILE_URL_OPERATION_WRITE", ttl)

    async def preview_url(self, port: int, *, ttl: Optional[float] = None, path: bool = False) -> str:
        """A link to the port's preview that opens with no other credential
        (see `Sandbox.preview_url`)."""
        r = await self.preview_token(port, ttl)
        return core.preview_link(self._config.urls()[0], self.sandbox_id, port, r, path)

    def preview_address(self, port: int) -> str:
        """The unsigned path-prefix address of a port's preview."""
        return core.preview_url(self._config.urls()[0], self.sandbox_id, port)

    async def preview_token(self, port: int, ttl: Optional[float] = None) -> dict:
        body = core.with_ttl({"port": port}, ttl)
        return await call(self._client, preview_token, self.sandbox_id, body=body)

    async def whoami(self) -> dict:
        return await call(self._client, who_am_i)

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.kill()
