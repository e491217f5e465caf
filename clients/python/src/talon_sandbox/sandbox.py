"""The synchronous SDK: `Sandbox.create()`, then `sandbox.commands`,
`sandbox.files` and `sandbox.pty`. See `async_sandbox` for asyncio."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, Optional

import httpx

from . import _core as core
from ._api.api.auth_service import auth_service_who_am_i as who_am_i
from ._api.api.filesystem_service import (
    filesystem_service_list_dir as list_dir,
    filesystem_service_make_dir as make_dir,
    filesystem_service_move_path as move_path,
    filesystem_service_remove_path as remove_path,
    filesystem_service_stat as stat_path,
)
from ._api.api.preview_service import preview_service_create_preview_token as preview_token
from ._api.api.process_service import (
    process_service_close_process_stdin as close_stdin,
    process_service_close_process_stdin_2 as close_stdin_tag,
    process_service_list_processes as list_processes,
    process_service_resize_process_pty as resize_pty,
    process_service_send_process_signal as send_signal,
    process_service_send_process_signal_2 as send_signal_tag,
)
from ._api.api.sandbox_service import (
    sandbox_service_create_sandbox as create_sandbox,
    sandbox_service_delete_sandbox as delete_sandbox,
    sandbox_service_get_sandbox as get_sandbox,
    sandbox_service_list_sandboxes as list_sandboxes,
    sandbox_service_pause_sandbox as pause_sandbox,
    sandbox_service_resume_sandbox as resume_sandbox,
    sandbox_service_set_sandbox_timeout as set_timeout,
)
from ._api.client import AuthenticatedClient
from ._core import CommandResult, FileInfo, FilesystemEvent, SandboxInfo


def _body(mod: Any, body: Optional[dict]) -> dict:
    """The generated call's body model, from a plain dict."""
    if body is None:
        return {}
    model = mod._get_kwargs.__annotations__.get("body")
    return {"body": model.from_dict(body)}


def call(client: AuthenticatedClient, mod: Any, *args: Any, body: Optional[dict] = None, **kw: Any) -> dict:
    """One unary call through the generated layer; errors raise."""
    kw = {k: v for k, v in kw.items() if v is not None}
    try:
        resp = mod.sync_detailed(*args, client=client, **_body(mod, body), **kw)
    except ValueError as e:  # the generated layer met an answer that is not JSON
        raise core.not_json(e) from e
    return core.parsed(resp)


def _lines(resp: httpx.Response) -> Iterator[core.Event]:
    core.check(resp, None if resp.is_success else _read_json(resp))
    for line in resp.iter_lines():
        if line.strip():
            yield core.event_of(line)


def _read_json(resp: httpx.Response) -> Any:
    resp.read()
    try:
        return resp.json()
    except ValueError:
        return resp.text


class CommandHandle:
    """A process started in the background (or reattached to). Its output
    is gathered by a reader thread; `wait()` gives the result."""

    def __init__(self, sandbox: "Sandbox", collector: core.Collector, lines: Callable[[], Iterator[core.Event]],
                 tag: Optional[str] = None) -> None:
        self._sandbox = sandbox
        self._c = collector
        self.tag = tag
        self._started = threading.Event()
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._thread.start()
        self._started.wait(timeout=30)
        if self._error:
            raise self._error

    def _read(self, lines: Callable[[], Iterator[core.Event]]) -> None:
        try:
            for e in lines():
                self._c.add(e)
                if e.kind == "started" or self._c.pid or e.kind == "exited":
                    self._started.set()
        except BaseException as e:  # surfaced by wait()
            self._error = e
        finally:
            self._started.set()

    @property
    def pid(self) -> int:
        return self._c.pid

    def wait(self, timeout: Optional[float] = None) -> CommandResult:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise core.errors.TimeoutError(f"process {self.pid} still running after {timeout} s")
        if self._error:
            raise self._error
        return self._c.result()

    def kill(self, signal: int = 9) -> None:
        self._sandbox.commands.kill(self.pid, signal=signal)

    def send_stdin(self, data: bytes | str) -> None:
        self._sandbox.commands.send_stdin(self.pid, data)

    def close_stdin(self) -> None:
        self._sandbox.commands.close_stdin(self.pid)


class Commands:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def _start_stream(self, body: dict) -> Iterator[core.Event]:
        http = self._s._client.get_httpx_client()
        with http.stream("POST", core.sandbox_path(self._s.sandbox_id, "/processes"), json=body) as resp:
            yield from _lines(resp)

    def run(self, cmd: str | list[str], *, background: bool = False, envs: Optional[dict] = None,
            cwd: Optional[str] = None, timeout: Optional[float] = None, tag: Optional[str] = None,
            stdin: Optional[bytes | str] = None, user: Optional[str] = None,
            on_stdout: Optional[Callable[[str], Any]] = None,
            on_stderr: Optional[Callable[[str], Any]] = None) -> CommandResult | CommandHandle:
        """Runs a command: a string under `sh -c`, or an argv list. Returns
        its CommandResult, or a CommandHandle when `background`."""
        body = core.process_body(cmd, envs=envs, cwd=cwd, timeout=timeout, tag=tag,
                                 stdin=stdin is not None, user=user)
        c = core.Collector(on_stdout, on_stderr)
        if background or stdin is not None:
            h = CommandHandle(self._s, c, lambda: self._start_stream(body), tag)
            if stdin is not None:
                if stdin:
                    h.send_stdin(stdin)
                h.close_stdin()
            return h if background else h.wait()
        for e in self._start_stream(body):
            c.add(e)
        return c.result()

    def connect(self, pid: Optional[int] = None, *, tag: Optional[str] = None,
                on_stdout: Optional[Callable[[str], Any]] = None,
                on_stderr: Optional[Callable[[str], Any]] = None) -> CommandHandle:
        """Reattaches to a process by pid or tag; its output so far is
        replayed, then followed."""

        def lines() -> Iterator[core.Event]:
            http = self._s._client.get_httpx_client()
            path = core.process_path(self._s.sandbox_id, pid, tag, ":connect")
            with http.stream("GET", path) as resp:
                yield from _lines(resp)

        c = core.Collector(on_stdout, on_stderr)
        c.pid = pid or 0
        return CommandHandle(self._s, c, lines, tag)

    def list(self, include_exited: bool = False) -> list[dict]:
        r = call(self._s._client, list_processes, self._s.sandbox_id, include_exited=include_exited)
        return r.get("processes", [])

    def kill(self, pid: Optional[int] = None, *, tag: Optional[str] = None, signal: int = 9) -> None:
        if tag:
            call(self._s._client, send_signal_tag, self._s.sandbox_id, tag, body={"signal": signal})
        else:
            call(self._s._client, send_signal, self._s.sandbox_id, str(pid), body={"signal": signal})

    def send_stdin(self, pid: int, data: bytes | str, *, tag: Optional[str] = None) -> None:
        raw = data.encode() if isinstance(data, str) else data
        http = self._s._client.get_httpx_client()
        path = core.process_path(self._s.sandbox_id, pid, tag, ":input")
        resp = http.post(path, content=raw, headers={"content-type": "application/octet-stream"})
        core.check(resp)

    def close_stdin(self, pid: int, *, tag: Optional[str] = None) -> None:
        if tag:
            call(self._s._client, close_stdin_tag, self._s.sandbox_id, tag, body={})
        else:
            call(self._s._client, close_stdin, self._s.sandbox_id, str(pid), body={})


class WatchHandle:
    """A running watch; `stop()` ends it. It holds the stream's context:
    were that collected, the response would close under the reader."""

    def __init__(self, ctx: Any, thread: threading.Thread) -> None:
        self._ctx = ctx
        self._thread = thread

    def stop(self) -> None:
        try:
            self._ctx.__exit__(None, None, None)
        except Exception:
            pass


class Files:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def write(self, path: str, data: bytes | str, *, mode: int = 0, create_parents: bool = True) -> FileInfo:
        """Writes a whole file atomically (temp file, fsync, rename)."""
        raw = data.encode() if isinstance(data, str) else data
        http = self._s._client.get_httpx_client()
        params = {"path": path, "create_parents": str(create_parents).lower()}
        if mode:
            params["mode"] = str(mode)
        resp = http.post(core.sandbox_path(self._s.sandbox_id, "/files:write"), params=params, content=raw,
                         headers={"content-type": "application/octet-stream"})
        core.check(resp)
        return FileInfo.of(resp.json().get("info", {}))

    def read(self, path: str, *, format: str = "text") -> str | bytes:
        """The file's content: `format="text"` (UTF-8) or `"bytes"`."""
        http = self._s._client.get_httpx_client()
        resp = http.get(core.sandbox_path(self._s.sandbox_id, "/files:read"), params={"path": path},
                        headers={"accept": "application/octet-stream"})
        core.check(resp)
        return resp.content if format == "bytes" else resp.content.decode("utf-8")

    def list(self, path: str = ".", depth: int = 1) -> list[FileInfo]:
        r = call(self._s._client, list_dir, self._s.sandbox_id, path=path, depth=depth)
        return [FileInfo.of(e) for e in r.get("entries", [])]

    def stat(self, path: str) -> FileInfo:
        return FileInfo.of(call(self._s._client, stat_path, self._s.sandbox_id, path=path).get("info", {}))

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
            return True
        except core.errors.NotFoundError:
            return False

    def make_dir(self, path: str, parents: bool = True) -> None:
        call(self._s._client, make_dir, self._s.sandbox_id, body={"path": path, "parents": parents})

    def rename(self, old: str, new: str) -> None:
        call(self._s._client, move_path, self._s.sandbox_id, body={"sourcePath": old, "destinationPath": new})

    def remove(self, path: str, recursive: bool = False) -> None:
        call(self._s._client, remove_path, self._s.sandbox_id, path=path, recursive=recursive)

    def watch(self, path: str, on_event: Callable[[FilesystemEvent], Any], recursive: bool = False) -> WatchHandle:
        """Calls `on_event` for each change under `path` until `stop()`."""
        http = self._s._client.get_httpx_client()
        ctx = http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                          params={"path": path, "recursive": str(recursive).lower()})
        resp = ctx.__enter__()
        core.check(resp, None if resp.is_success else _read_json(resp))

        def read() -> None:
            try:
                import json

                for line in resp.iter_lines():
                    if line.strip():
                        d = json.loads(line)
                        t = str(d.get("type", "")).removeprefix("FILE_EVENT_TYPE_").lower()
                        on_event(FilesystemEvent(t, d.get("path", "")))
            except Exception:
                pass

        t = threading.Thread(target=read, daemon=True)
        t.start()
        return WatchHandle(ctx, t)


class PtyHandle(CommandHandle):
    def resize(self, cols: int, rows: int) -> None:
        call(self._sandbox._client, resize_pty, self._sandbox.sandbox_id, str(self.pid),
             body={"size": {"cols": cols, "rows": rows}})


class Pty:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def create(self, *, cols: int = 80, rows: int = 24, on_data: Optional[Callable[[bytes], Any]] = None,
               cmd: Optional[str | list[str]] = None, envs: Optional[dict] = None, cwd: Optional[str] = None,
               tag: Optional[str] = None) -> PtyHandle:
        """A terminal: a shell (or `cmd`) under a PTY. Output goes to
        `on_data`; send keystrokes with `send_stdin`."""
        body = core.process_body(cmd or ["bash", "-l"], envs=envs, cwd=cwd, tag=tag, stdin=True,
                                 pty=(cols, rows))
        c = core.Collector(
            (lambda s: on_data(s.encode())) if on_data else None,
        )
        return PtyHandle(self._s, c, lambda: self._s.commands._start_stream(body), tag)


class Sandbox:
    """One sandbox. `Sandbox.create()` makes one and, by default, waits
    until it runs; `Sandbox.connect(id)` attaches to an existing one."""

    def __init__(self, info: SandboxInfo, client: AuthenticatedClient, config: core.Config) -> None:
        self._info = info
        self._client = client
        self._config = config
        self.commands = Commands(self)
        self.files = Files(self)
        self.pty = Pty(self)

    @property
    def sandbox_id(self) -> str:
        return self._info.sandbox_id

    @classmethod
    def create(cls, image: str = "host", *, envs: Optional[dict] = None, timeout: Optional[float] = None,
               cpu_millis: Optional[int] = None, memory_mib: Optional[int] = None,
               labels: Optional[dict] = None, secrets: Optional[list[str]] = None, wait: bool = True,
               wait_timeout: float = 60, api_key: Optional[str] = None, base_url: Optional[str] = None,
               request_timeout: float = 60.0) -> "Sandbox":
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.client()
        body = core.create_body(image, envs, timeout, cpu_millis, memory_mib, labels, secrets)
        r = call(client, create_sandbox, body=body, wait_until_running=wait or None,
                 wait_timeout=f"{float(wait_timeout):g}s" if wait else None)
        return cls(SandboxInfo.of(r["sandbox"]), client, config)

    @classmethod
    def connect(cls, sandbox_id: str, *, api_key: Optional[str] = None, base_url: Optional[str] = None,
                request_timeout: float = 60.0) -> "Sandbox":
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.client()
        r = call(client, get_sandbox, sandbox_id)
        return cls(SandboxInfo.of(r["sandbox"]), client, config)

    @staticmethod
    def list(*, page_size: Optional[int] = None, page_token: Optional[str] = None, api_key: Optional[str] = None,
             base_url: Optional[str] = None) -> tuple[list[SandboxInfo], str]:
        """One page of the caller's sandboxes and the next page's token."""
        client = core.Config(api_key, base_url).client()
        r = call(client, list_sandboxes, page_size=page_size, page_token=page_token)
        return [SandboxInfo.of(s) for s in r.get("sandboxes", [])], r.get("nextPageToken", "")

    def info(self) -> SandboxInfo:
        self._info = SandboxInfo.of(call(self._client, get_sandbox, self.sandbox_id)["sandbox"])
        return self._info

    @property
    def state(self) -> str:
        return self.info().state

    def pause(self) -> None:
        call(self._client, pause_sandbox, self.sandbox_id, body={})

    def resume(self) -> None:
        call(self._client, resume_sandbox, self.sandbox_id, body={})

    def kill(self) -> None:
        """Deletes the sandbox and everything in it."""
        call(self._client, delete_sandbox, self.sandbox_id)

    def set_timeout(self, seconds: float) -> None:
        call(self._client, set_timeout, self.sandbox_id, body={"timeout": f"{float(seconds):g}s"})

    def preview_url(self, port: int, *, ttl: Optional[float] = None, path: bool = False) -> str:
        """A link to the port's preview that opens with no other credential:
        it carries a fresh preview token (valid ``ttl`` seconds, or the
        server's default), which the gateway trades for a cookie of that
        preview only. In the form the gateway serves by default: a
        subdomain (``http://PORT-ID.localhost:8080/`` on loopback), where
        apps with root-absolute asset paths work; ``path=True`` gives the
        path form (``/preview/ID/PORT/``), for clients that can't resolve
        ``*.localhost``. ``preview_address`` is the bare path address,
        which needs an Authorization header."""
        r = self.preview_token(port, ttl)
        return core.preview_link(self._config.base_url or core.DEFAULT_URL, self.sandbox_id, port, r, path)

    def preview_address(self, port: int) -> str:
        """The unsigned path-prefix address of a port's preview."""
        return core.preview_url(self._config.base_url or core.DEFAULT_URL, self.sandbox_id, port)

    def preview_token(self, port: int, ttl: Optional[float] = None) -> dict:
        body: dict[str, Any] = {"port": port}
        if ttl:
            body["ttl"] = f"{float(ttl):g}s"
        return call(self._client, preview_token, self.sandbox_id, body=body)

    def whoami(self) -> dict:
        return call(self._client, who_am_i)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.kill()
        except core.errors.NotFoundError:
            pass
