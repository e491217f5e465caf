"""The synchronous SDK: `Sandbox.create()`, then `sandbox.commands`,
`sandbox.files` and `sandbox.pty`. See `async_sandbox` for asyncio."""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator, Optional

import httpx

from . import _core as core
from ._api.api.auth_service import auth_service_who_am_i as who_am_i
from ._api.api.filesystem_service import (
    filesystem_service_create_file_url as create_file_url,
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
    sandbox_service_create_snapshot as create_snapshot,
    sandbox_service_delete_sandbox as delete_sandbox,
    sandbox_service_delete_snapshot as delete_snapshot,
    sandbox_service_fork_sandbox as fork_sandbox,
    sandbox_service_get_snapshot as get_snapshot,
    sandbox_service_get_sandbox as get_sandbox,
    sandbox_service_get_sandbox_metrics as get_metrics,
    sandbox_service_list_sandboxes as list_sandboxes,
    sandbox_service_pause_sandbox as pause_sandbox,
    sandbox_service_resume_sandbox as resume_sandbox,
    sandbox_service_set_sandbox_timeout as set_timeout,
    sandbox_service_start_sandbox as start_sandbox,
)
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
    is gathered by a reader thread; `wait()` gives the result, raising
    CommandExitError on a non-zero exit like a foreground `run`."""

    def __init__(self, sandbox: "Sandbox", collector: core.Collector,
                 lines: Callable[[list], Iterator[core.Event]], tag: Optional[str] = None,
                 timeout: Optional[float] = None) -> None:
        self._sandbox = sandbox
        self._c = collector
        self.tag = tag
        self._timeout = timeout
        self._opened: list = []
        self._disconnected = False
        self._started = threading.Event()
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._thread.start()
        self._started.wait(timeout=30)
        if self._error:
            raise self._error

    def _read(self, lines: Callable[[list], Iterator[core.Event]]) -> None:
        try:
            for e in lines(self._opened):
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

    @property
    def stdout(self) -> str:
        """The output so far."""
        return self._c.out.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self._c.err.decode("utf-8", "replace")

    def wait(self, timeout: Optional[float] = None) -> CommandResult:
        if self._disconnected:
            raise core.errors.TalonError("this handle was disconnected; commands.connect(pid) follows it again")
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise core.errors.TimeoutError(f"process {self.pid} still running after {timeout} s")
        if self._error:
            raise self._error
        return core.finish(self._c.result(), self._timeout)

    def disconnect(self) -> None:
        """Stops following the process; it keeps running in the sandbox."""
        self._disconnected = True
        for resp in self._opened:
            resp.close()
        self._thread.join(5)

    def kill(self, signal: int = 9) -> None:
        self._sandbox.commands.kill(self.pid, signal=signal)

    def send_stdin(self, data: bytes | str) -> None:
        self._sandbox.commands.send_stdin(self.pid, data)

    def close_stdin(self) -> None:
        self._sandbox.commands.close_stdin(self.pid)


class Commands:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def _start_stream(self, body: dict, opened: Optional[list] = None) -> Iterator[core.Event]:
        http = self._s._client.get_httpx_client()
        with http.stream("POST", core.sandbox_path(self._s.sandbox_id, "/processes"), json=body) as resp:
            if opened is not None:
                opened.append(resp)
            yield from _lines(resp)

    def run(self, cmd: str | list[str], *, background: bool = False, envs: Optional[dict] = None,
            cwd: Optional[str] = None, timeout: Optional[float] = core.DEFAULT_COMMAND_TIMEOUT,
            tag: Optional[str] = None, stdin: Optional[bytes | str] = None, user: Optional[str] = None,
            on_stdout: Optional[Callable[[str], Any]] = None,
            on_stderr: Optional[Callable[[str], Any]] = None) -> CommandResult | CommandHandle:
        """Runs a command: a string under `sh -c`, or an argv list. Returns
        its CommandResult, or a CommandHandle when `background`. A command
        that ends non-zero raises CommandExitError (the result attached);
        one that outlives `timeout` (60 s for a foreground command; 0 or
        None: no limit; none for a background one unless given) is killed
        and raises CommandTimeoutError."""
        limit = None if background and timeout == core.DEFAULT_COMMAND_TIMEOUT else (timeout or None)
        body = core.process_body(cmd, envs=envs, cwd=cwd, timeout=limit, tag=tag,
                                 stdin=stdin is not None, user=user)
        c = core.Collector(on_stdout, on_stderr)
        if background or stdin is not None:
            h = CommandHandle(self._s, c, lambda opened: self._start_stream(body, opened), tag, limit)
            if stdin is not None:
                if stdin:
                    h.send_stdin(stdin)
                h.close_stdin()
            return h if background else h.wait()
        for e in self._start_stream(body):
            c.add(e)
        return core.finish(c.result(), limit)

    def connect(self, pid: Optional[int] = None, *, tag: Optional[str] = None,
                on_stdout: Optional[Callable[[str], Any]] = None,
                on_stderr: Optional[Callable[[str], Any]] = None) -> CommandHandle:
        """Reattaches to a process by pid or tag; its output so far is
        replayed, then followed."""
        c = core.Collector(on_stdout, on_stderr)
        c.pid = pid or 0
        return CommandHandle(self._s, c, lambda opened: self._connect_stream(pid, tag, opened), tag)

    def _connect_stream(self, pid: Optional[int], tag: Optional[str], opened: list) -> Iterator[core.Event]:
        http = self._s._client.get_httpx_client()
        path = core.process_path(self._s.sandbox_id, pid, tag, ":connect")
        with http.stream("GET", path) as resp:
            opened.append(resp)
            yield from _lines(resp)

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
    """A running watch: its events arrive in the background, to the
    callback if one was given and to `get_new_events()` either way;
    `stop()` ends it. It holds the stream's context: were that collected,
    the response would close under the reader."""

    def __init__(self, ctx: Any, resp: httpx.Response, on_event: Optional[Callable[[FilesystemEvent], Any]]) -> None:
        import queue

        self._ctx = ctx
        self._resp = resp
        self._on_event = on_event
        self._queue: "queue.Queue[FilesystemEvent]" = queue.Queue()
        self.error: Optional[BaseException] = None
        self._stopped = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self._resp.iter_lines():
                if line.strip():
                    ev = core.fs_event(line)
                    self._queue.put(ev)
                    if self._on_event:
                        self._on_event(ev)
        except Exception as e:  # the stream closed under us (stop) or broke
            if not self._stopped:
                self.error = e

    def get_new_events(self) -> list[FilesystemEvent]:
        """The events that arrived since the last call, oldest first."""
        out = []
        while not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out

    def stop(self) -> None:
        self._stopped = True
        try:
            self._ctx.__exit__(None, None, None)
        except Exception:
            pass


class Agent:
    """Agent runs: a coding agent started in the sandbox with a prompt on
    its stdin, whose output lines, workspace changes and end stream back.
    A run outlives the connection: `run` reattaches by itself when the
    stream drops (up to `reattach` times), and `connect` by id."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def _follow(self, method: str, path: str, f: core.AgentFollower, **kw: Any) -> None:
        http = self._s._client.get_httpx_client()
        with http.stream(method, path, timeout=None, **kw) as resp:
            for line in _lines_raw(resp):
                f.add(core.agent_event(line))

    def run(self, command: str | list[str], prompt: str = "", *, envs: Optional[dict] = None,
            cwd: Optional[str] = None, user: Optional[str] = None, secrets: Optional[list[str]] = None,
            timeout: Optional[float] = None, on_event: Optional[Callable[[core.AgentEvent], Any]] = None,
            reattach: int = 3) -> core.AgentRun:
        """Runs `command` (a shell line, or argv) with `prompt` on stdin
        until it ends, calling `on_event` for each event. `secrets` names
        tenant secrets it gets as environment variables (redacted from the
        events). Returns the completed run; a non-zero exit is not an error."""
        f = core.AgentFollower(on_event)
        body = core.agent_body(command, prompt, envs, cwd, user, secrets, timeout)
        try:
            self._follow("POST", core.sandbox_path(self._s.sandbox_id, "/agent:run"), f, json=body)
        except httpx.TransportError:
            if not f.run_id:
                raise
        tries = 0
        while f.done is None and tries < reattach and f.run_id:
            tries += 1
            try:
                self._follow("GET", self._run_path(f.run_id, ":connect"), f,
                             params={"afterSeq": str(f.last_seq)})
            except httpx.TransportError:
                continue
        return f.result()

    def connect(self, run_id: str, *, after_seq: int = 0,
                on_event: Optional[Callable[[core.AgentEvent], Any]] = None) -> core.AgentRun:
        """Follows a run by id from after `after_seq` until it completes."""
        f = core.AgentFollower(on_event)
        f.run_id, f.last_seq = run_id, after_seq
        self._follow("GET", self._run_path(run_id, ":connect"), f, params={"afterSeq": str(after_seq)})
        return f.result()

    def cancel(self, run_id: str) -> None:
        """Kills the run's process tree; the run then completes."""
        http = self._s._client.get_httpx_client()
        resp = http.post(self._run_path(run_id, ":cancel"), json={})
        core.check(resp)

    def _run_path(self, run_id: str, verb: str) -> str:
        from urllib.parse import quote
        return core.sandbox_path(self._s.sandbox_id, f"/agent-runs/{quote(run_id, safe='')}{verb}")


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


class Code:
    """Code contexts: kernels inside the sandbox (Python in ipykernel,
    JavaScript in Node, Bash) that keep their state between runs.
    `run(code)` uses the sandbox's default context of its language."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def _call(self, method: str, rest: str, **kw: Any) -> Any:
        http = self._s._client.get_httpx_client()
        resp = http.request(method, core.sandbox_path(self._s.sandbox_id, rest), **kw)
        body = _read_json(resp)
        core.check(resp, body)
        return body

    def run(self, code: str, *, language: Optional[str] = None, context: Any = None,
            timeout: Optional[float] = None, on_stdout: Optional[Callable[[str], Any]] = None,
            on_stderr: Optional[Callable[[str], Any]] = None,
            on_result: Optional[Callable[[core.CodeResult], Any]] = None,
            on_error: Optional[Callable[[core.CodeError], Any]] = None) -> core.Execution:
        """Runs `code` in `context` (a CodeContext or its id), or in the
        default context of `language` ("python" when neither is given),
        calling the callbacks as output arrives. An error the code raises
        is `Execution.error`, not an exception."""
        f = core.CodeFollower(on_stdout, on_stderr, on_result, on_error)
        body = core.run_code_body(code, language, context, timeout)
        http = self._s._client.get_httpx_client()
        with http.stream("POST", core.sandbox_path(self._s.sandbox_id, "/code:run"), json=body,
                         timeout=None) as resp:
            for line in _lines_raw(resp):
                f.add(line)
        return f.result()

    def create_context(self, language: str = "python", *, cwd: Optional[str] = None,
                       envs: Optional[dict] = None) -> core.CodeContext:
        """Starts a context (its kernel answers before this returns)."""
        return core.code_context(self._call("POST", "/code-contexts", json=core.context_body(language, cwd, envs),
                                             timeout=90))

    def list_contexts(self) -> list:
        body = self._call("GET", "/code-contexts")
        return [core.code_context(c) for c in (body or {}).get("contexts", [])]

    def restart_context(self, context: Any) -> core.CodeContext:
        """A fresh kernel: the state is gone, the id stays."""
        from urllib.parse import quote
        cid = quote(core.context_id(context), safe="")
        return core.code_context(self._call("POST", f"/code-contexts/{cid}:restart", json={}, timeout=90))

    def interrupt(self, context: Any) -> None:
        """Interrupts the context's run (KeyboardInterrupt in Python)."""
        from urllib.parse import quote
        self._call("POST", f"/code-contexts/{quote(core.context_id(context), safe='')}:interrupt", json={})

    def delete_context(self, context: Any) -> None:
        from urllib.parse import quote
        self._call("DELETE", f"/code-contexts/{quote(core.context_id(context), safe='')}")


def _lines_raw(resp: httpx.Response) -> Iterator[str]:
    core.check(resp, None if resp.is_success else _read_json(resp))
    for line in resp.iter_lines():
        if line.strip():
            yield line


def _user(params: dict, user: Optional[str]) -> dict:
    if user:
        params["user"] = user
    return params


class Files:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def write(self, path: str, data: bytes | str | Any, *, mode: int = 0, create_parents: bool = True,
              user: Optional[str] = None) -> FileInfo:
        """Writes a whole file atomically (temp file, fsync, rename). `data`
        is text, bytes, or a binary file object (streamed, not read into
        memory); `user` makes it that user's."""
        raw = data.encode() if isinstance(data, str) else data
        http = self._s._client.get_httpx_client()
        params = _user({"path": path, "create_parents": str(create_parents).lower()}, user)
        if mode:
            params["mode"] = str(mode)
        resp = http.post(core.sandbox_path(self._s.sandbox_id, "/files:write"), params=params, content=raw,
                         headers={"content-type": "application/octet-stream"})
        core.check(resp)
        return FileInfo.of(resp.json().get("info", {}))

    def write_files(self, files: list[WriteEntry | dict], *, user: Optional[str] = None) -> list[FileInfo]:
        """Writes several files (each `WriteEntry(path, data)` or a dict
        with `path` and `data`), each atomically, in order."""
        out = []
        for f in files:
            path, data = (f.path, f.data) if isinstance(f, WriteEntry) else (f["path"], f["data"])
            out.append(self.write(path, data, user=user))
        return out

    def read(self, path: str, *, format: str = "text", user: Optional[str] = None) -> str | bytes | Iterator[bytes]:
        """The file's content: `format="text"` (UTF-8), `"bytes"`, or
        `"stream"` (an iterator of chunks, for files too big to hold)."""
        if format not in ("text", "bytes", "stream"):
            raise core.errors.InvalidArgumentError(f"format is 'text', 'bytes' or 'stream', not {format!r}")
        http = self._s._client.get_httpx_client()
        url = core.sandbox_path(self._s.sandbox_id, "/files:read")
        params = _user({"path": path}, user)
        headers = {"accept": "application/octet-stream"}
        if format == "stream":
            def chunks() -> Iterator[bytes]:
                with http.stream("GET", url, params=params, headers=headers) as resp:
                    core.check(resp, None if resp.is_success else _read_json(resp))
                    yield from resp.iter_bytes()

            return chunks()
        resp = http.get(url, params=params, headers=headers)
        core.check(resp)
        return resp.content if format == "bytes" else resp.content.decode("utf-8")

    def list(self, path: str = ".", depth: int = 1, *, user: Optional[str] = None) -> list[FileInfo]:
        r = call(self._s._client, list_dir, self._s.sandbox_id, path=path, depth=depth, user=user)
        return [FileInfo.of(e) for e in r.get("entries", [])]

    def stat(self, path: str, *, user: Optional[str] = None) -> FileInfo:
        return FileInfo.of(call(self._s._client, stat_path, self._s.sandbox_id, path=path, user=user).get("info", {}))

    get_info = stat

    def exists(self, path: str, *, user: Optional[str] = None) -> bool:
        try:
            self.stat(path, user=user)
            return True
        except core.errors.NotFoundError:
            return False

    def make_dir(self, path: str, parents: bool = True, *, user: Optional[str] = None) -> None:
        call(self._s._client, make_dir, self._s.sandbox_id, body=_user({"path": path, "parents": parents}, user))

    def rename(self, old: str, new: str, *, user: Optional[str] = None) -> None:
        call(self._s._client, move_path, self._s.sandbox_id,
             body=_user({"sourcePath": old, "destinationPath": new}, user))

    def remove(self, path: str, recursive: bool = False, *, user: Optional[str] = None) -> None:
        call(self._s._client, remove_path, self._s.sandbox_id, path=path, recursive=recursive, user=user)

    def watch_dir(self, path: str, on_event: Optional[Callable[[FilesystemEvent], Any]] = None, *,
                  recursive: bool = False, user: Optional[str] = None) -> WatchHandle:
        """Watches `path` for changes until `stop()`: poll them with
        `get_new_events()`, or pass `on_event` to be called for each."""
        http = self._s._client.get_httpx_client()
        ctx = http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                          params=_user({"path": path, "recursive": str(recursive).lower()}, user))
        resp = ctx.__enter__()
        core.check(resp, None if resp.is_success else _read_json(resp))
        return WatchHandle(ctx, resp, on_event)

    def watch(self, path: str, on_event: Callable[[FilesystemEvent], Any], recursive: bool = False) -> WatchHandle:
        """Calls `on_event` for each change under `path` until `stop()`."""
        return self.watch_dir(path, on_event, recursive=recursive)


class PtyHandle(CommandHandle):
    def resize(self, cols: int, rows: int) -> None:
        self._sandbox.pty.resize(self.pid, cols, rows)


class Pty:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def create(self, *, cols: int = 80, rows: int = 24, on_data: Optional[Callable[[bytes], Any]] = None,
               cmd: Optional[str | list[str]] = None, envs: Optional[dict] = None, cwd: Optional[str] = None,
               tag: Optional[str] = None, user: Optional[str] = None,
               timeout: Optional[float] = None) -> PtyHandle:
        """A terminal: a shell (or `cmd`) under a PTY, as `user` (the
        image's default when None), killed after `timeout` s if given.
        Output goes to `on_data`; send keystrokes with `send_stdin`."""
        body = core.process_body(cmd or ["bash", "-l"], envs=envs, cwd=cwd, tag=tag, stdin=True,
                                 pty=(cols, rows), user=user, timeout=timeout)
        c = core.Collector((lambda s: on_data(s.encode())) if on_data else None)
        return PtyHandle(self._s, c, lambda opened: self._s.commands._start_stream(body, opened), tag, timeout)

    def connect(self, pid: int, *, on_data: Optional[Callable[[bytes], Any]] = None) -> PtyHandle:
        """Reattaches to a terminal by pid: its output so far, then on."""
        c = core.Collector((lambda s: on_data(s.encode())) if on_data else None)
        c.pid = pid
        return PtyHandle(self._s, c, lambda opened: self._s.commands._connect_stream(pid, None, opened))

    def resize(self, pid: int, cols: int, rows: int) -> None:
        call(self._s._client, resize_pty, self._s.sandbox_id, str(pid),
             body={"size": {"cols": cols, "rows": rows}})

    def send_stdin(self, pid: int, data: bytes | str) -> None:
        self._s.commands.send_stdin(pid, data)

    def kill(self, pid: int) -> None:
        self._s.commands.kill(pid)


class Sandbox:
    """One sandbox. `Sandbox.create()` makes one and, by default, waits
    until it runs; `Sandbox.connect(id)` attaches to an existing one (and
    resumes it if it is paused)."""

    def __init__(self, info: SandboxInfo, client: AuthenticatedClient, config: core.Config) -> None:
        self._info = info
        self._client = client
        self._config = config
        self.commands = Commands(self)
        self.files = Files(self)
        self.pty = Pty(self)
        self.agent = Agent(self)
        self.browser = Browser(self)
        self.code = Code(self)

    @property
    def sandbox_id(self) -> str:
        return self._info.sandbox_id

    @classmethod
    def create(cls, image: Optional[str] = None, *, template: Optional[str] = None, envs: Optional[dict] = None,
               timeout: Optional[float] = None, metadata: Optional[dict] = None,
               allow_internet_access: Optional[bool] = None, network: Optional[dict] = None,
               on_timeout: Optional[str] = None, idempotency_key: Optional[str] = None,
               idle_timeout: Optional[float] = None, auto_resume: Optional[bool] = None,
               cpu_millis: Optional[int] = None, memory_mib: Optional[int] = None,
               labels: Optional[dict] = None, secrets: Optional[list[str]] = None, wait: bool = True,
               wait_timeout: float = 60, api_key: Optional[str] = None, base_url: Optional[str] = None,
               request_timeout: float = 60.0, snapshot_id: Optional[str] = None,
               isolation: Optional[str] = None) -> "Sandbox":
        """Creates a sandbox from `image` (E2B's `template`; "host" by
        default) and waits until it runs. `timeout` (s) is how long it may
        live, then `on_timeout` ("pause", the default, or "kill") happens.
        `allow_internet_access=False` seals it; `network={"allow_out": [...]}`
        allows only those CIDRs and domains. A retried create with the same
        `idempotency_key` returns the first one's sandbox. `idle_timeout`
        (s) pauses it after that long without activity; with `auto_resume`
        the next call to a paused sandbox resumes it. `snapshot_id` starts
        it from a snapshot's files (`create_snapshot`), on its image.
        `isolation` is "container" (the default) or "gvisor" (a user-space
        kernel between the code and the host's, where a worker offers it)."""
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.client()
        body = core.create_body(image or template or ("" if snapshot_id else "host"), envs, timeout, cpu_millis,
                                memory_mib, labels, secrets, metadata, allow_internet_access, network,
                                on_timeout, idle_timeout, auto_resume, snapshot_id, isolation)
        r = call(client, create_sandbox, body=body, wait_until_running=wait or None,
                 wait_timeout=f"{float(wait_timeout):g}s" if wait else None, idempotency_key=idempotency_key)
        return cls(SandboxInfo.of(r["sandbox"]), client, config)

    @classmethod
    def connect(cls, sandbox_id: str, *, timeout: Optional[float] = None, api_key: Optional[str] = None,
                base_url: Optional[str] = None, request_timeout: float = 60.0) -> "Sandbox":
        """Attaches to a sandbox: a paused one is resumed and a stopped one
        started; a deleted one is NotFoundError. `timeout` sets how long it
        may live from now."""
        config = core.Config(api_key, base_url, request_timeout).resolved()
        client = config.client()
        info = SandboxInfo.of(call(client, get_sandbox, sandbox_id)["sandbox"])
        core.connectable(info)
        if info.state == "paused":
            call(client, resume_sandbox, sandbox_id, body={})
        elif info.state == "stopped":
            call(client, start_sandbox, sandbox_id, body={})
        if timeout:
            call(client, set_timeout, sandbox_id, body={"timeout": f"{float(timeout):g}s"})
        sbx = cls(info, client, config)
        if info.state != "running" or timeout:
            sbx.info()
        return sbx

    @staticmethod
    def list(*, metadata: Optional[dict] = None, state: Optional[list[str] | str] = None,
             page_size: Optional[int] = None, page_token: Optional[str] = None, limit: Optional[int] = None,
             next_token: Optional[str] = None, api_key: Optional[str] = None,
             base_url: Optional[str] = None) -> tuple[list[SandboxInfo], str]:
        """One page of the caller's sandboxes (newest first) that hold every
        `metadata` pair and are in one of `state` ("running", "paused", …;
        all but deleted ones when unset), and the next page's token ("" on
        the last). `limit`/`next_token` are E2B's names for
        `page_size`/`page_token`."""
        client = core.Config(api_key, base_url).client()
        params = core.list_params(metadata, state, page_size or limit, page_token or next_token)
        return core.page(client.get_httpx_client().get("/v1/sandboxes", params=params), "sandboxes", SandboxInfo.of)

    def info(self) -> SandboxInfo:
        self._info = SandboxInfo.of(call(self._client, get_sandbox, self.sandbox_id)["sandbox"])
        return self._info

    @staticmethod
    def _info_by_id(sandbox_id: str, *, api_key: Optional[str] = None,
                    base_url: Optional[str] = None) -> SandboxInfo:
        return SandboxInfo.of(call(core.Config(api_key, base_url).client(), get_sandbox, sandbox_id)["sandbox"])

    # `sbx.get_info()` and `Sandbox.get_info(sandbox_id)` (which, unlike
    # `connect`, never resumes anything).
    get_info = core.either(info, _info_by_id)

    @property
    def state(self) -> str:
        return self.info().state

    def is_running(self) -> bool:
        return self.info().state == "running"

    def pause(self) -> None:
        call(self._client, pause_sandbox, self.sandbox_id, body={})

    def resume(self) -> None:
        call(self._client, resume_sandbox, self.sandbox_id, body={})

    def _kill(self) -> bool:
        """Deletes the sandbox and everything in it; False if it was gone."""
        try:
            call(self._client, delete_sandbox, self.sandbox_id)
            return True
        except core.errors.NotFoundError:
            return False

    @staticmethod
    def _kill_by_id(sandbox_id: str, *, api_key: Optional[str] = None, base_url: Optional[str] = None) -> bool:
        try:
            call(core.Config(api_key, base_url).client(), delete_sandbox, sandbox_id)
            return True
        except core.errors.NotFoundError:
            return False

    # `sbx.kill()` and `Sandbox.kill(sandbox_id)`, as in E2B.
    kill = core.either(_kill, _kill_by_id)

    def create_snapshot(self, name: Optional[str] = None) -> SnapshotInfo:
        """Copies the sandbox's filesystem (its writable root, workspace and
        home) into a snapshot of your tenant; a running sandbox is frozen
        for the copy only. Processes and memory are not kept."""
        body = {"name": name} if name else {}
        return SnapshotInfo.of(call(self._client, create_snapshot, self.sandbox_id, body=body))

    def fork(self, count: int = 1) -> list["Sandbox"]:
        """`count` (1 to 20) new sandboxes from this one's files now, with its
        settings and each its own id, tokens and secrets; all running."""
        r = call(self._client, fork_sandbox, self.sandbox_id, body={"count": count})
        return [Sandbox(SandboxInfo.of(s), self._client, self._config) for s in r.get("sandboxes", [])]

    @staticmethod
    def list_snapshots(*, sandbox_id: Optional[str] = None, page_size: Optional[int] = None,
                       page_token: Optional[str] = None, api_key: Optional[str] = None,
                       base_url: Optional[str] = None) -> tuple[list[SnapshotInfo], str]:
        """One page of your tenant's snapshots (newest first; of one sandbox
        when `sandbox_id` is set), and the next page's token ("" on the last)."""
        client = core.Config(api_key, base_url).client()
        params = core.page_params(page_size, page_token, sandboxId=sandbox_id)
        return core.page(client.get_httpx_client().get("/v1/snapshots", params=params), "snapshots", SnapshotInfo.of)

    @staticmethod
    def get_snapshot(snapshot_id: str, *, api_key: Optional[str] = None,
                     base_url: Optional[str] = None) -> SnapshotInfo:
        return SnapshotInfo.of(call(core.Config(api_key, base_url).client(), get_snapshot, snapshot_id))

    @staticmethod
    def delete_snapshot(snapshot_id: str, *, api_key: Optional[str] = None,
                        base_url: Optional[str] = None) -> None:
        """Deletes a snapshot; sandboxes made from it keep their files."""
        call(core.Config(api_key, base_url).client(), delete_snapshot, snapshot_id)

    def set_timeout(self, seconds: float) -> None:
        """The sandbox may live `seconds` from now."""
        call(self._client, set_timeout, self.sandbox_id, body={"timeout": f"{float(seconds):g}s"})

    def get_metrics(self) -> list[SandboxMetrics]:
        """What the sandbox uses now (one reading, in a list like E2B's
        series): cpu as a share of its cores, memory, disk."""
        return [SandboxMetrics.of(call(self._client, get_metrics, self.sandbox_id))]

    def get_host(self, port: int, *, ttl: Optional[float] = None) -> str:
        """A URL of the port that a browser opens directly (a signed
        preview link; see `preview_url`)."""
        return self.preview_url(port, ttl=ttl)

    def _file_url(self, path: str, op: str, ttl: Optional[float]) -> str:
        body = core.with_ttl({"path": path, "operation": op}, ttl)
        return call(self._client, create_file_url, self.sandbox_id, body=body)["url"]

    def download_url(self, path: str, *, ttl: Optional[float] = None) -> str:
        """A URL that downloads the file with a plain GET and no other
        credential, for `ttl` s (3600 by default)."""
        return self._file_url(path, "FILE_URL_OPERATION_READ", ttl)

    def upload_url(self, path: str, *, ttl: Optional[float] = None) -> str:
        """A URL that replaces the file with the body of a POST
        (application/octet-stream) and no other credential."""
        return self._file_url(path, "FILE_URL_OPERATION_WRITE", ttl)

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
        return core.preview_link(self._config.urls()[0], self.sandbox_id, port, r, path)

    def preview_address(self, port: int) -> str:
        """The unsigned path-prefix address of a port's preview."""
        return core.preview_url(self._config.urls()[0], self.sandbox_id, port)

    def preview_token(self, port: int, ttl: Optional[float] = None) -> dict:
        body = core.with_ttl({"port": port}, ttl)
        return call(self._client, preview_token, self.sandbox_id, body=body)

    def whoami(self) -> dict:
        return call(self._client, who_am_i)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()
