"""`Sandbox.agent`: coding-agent runs, followed and reattached to."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import httpx

from . import _core as core
from ._http import _lines_raw

if TYPE_CHECKING:
    from .sandbox import Sandbox


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
