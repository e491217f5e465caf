"""`Sandbox.commands`: processes started, followed and signalled, and the
handle of one running in the background."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from . import _core as core
from ._core import CommandResult
from ._endpoints import close_stdin, close_stdin_tag, list_processes, send_signal, send_signal_tag
from ._http import _lines, call

if TYPE_CHECKING:
    from .sandbox import Sandbox


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
