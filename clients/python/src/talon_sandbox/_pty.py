"""`Sandbox.pty`: terminals, processes under a PTY that are otherwise
commands (their handle is a CommandHandle that can also resize)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from . import _core as core
from ._commands import CommandHandle
from ._endpoints import resize_pty
from ._http import call

if TYPE_CHECKING:
    from .sandbox import Sandbox


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
