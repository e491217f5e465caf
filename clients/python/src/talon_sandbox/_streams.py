"""The streamed answers (NDJSON, one event a line): the parsing of a line
of a process, a directory watch, an agent run or a code run, and the
followers that fold a stream's events into its result, calling the
caller's callbacks as events arrive. Shared by the sync and async SDKs,
which only read the lines."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import errors
from ._models import AgentEvent, AgentRun, CodeError, CodeResult, CommandResult, Execution, FilesystemEvent


@dataclass
class Event:
    """One line of a process stream."""

    kind: str  # "started" | "stdout" | "stderr" | "exited"
    pid: int = 0
    data: bytes = b""
    seq: int = 0
    exit_code: int = 0
    signal: int = 0
    timed_out: bool = False


def event_of(line: bytes | str) -> Event:
    """Parses one NDJSON line of StartProcess/ConnectProcess; an error
    line raises."""
    d = json.loads(line)
    if "error" in d:
        e = d["error"]
        raise errors.from_body(0, e)
    ev = d.get("event", d)
    if ev.get("started"):
        return Event("started", pid=int(ev["started"].get("pid", 0)))
    if ev.get("output"):
        o = ev["output"]
        kind = "stderr" if o.get("stream") == "OUTPUT_STREAM_STDERR" else "stdout"
        return Event(kind, data=base64.b64decode(o.get("data", "")), seq=int(o.get("seq", 0)))
    if ev.get("exited"):
        x = ev["exited"]
        return Event("exited", exit_code=int(x.get("exitCode", 0)), signal=int(x.get("signal", 0)),
                     timed_out=bool(x.get("timedOut", False)))
    return Event("unknown")


class Collector:
    """Gathers a process's events into a CommandResult, calling the
    callbacks as output arrives."""

    def __init__(self, on_stdout: Optional[Callable[[str], Any]] = None,
                 on_stderr: Optional[Callable[[str], Any]] = None) -> None:
        self.out = bytearray()
        self.err = bytearray()
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.pid = 0
        self.last_seq = 0
        self.exit: Optional[Event] = None

    def add(self, e: Event) -> None:
        if e.kind == "started":
            self.pid = e.pid
        elif e.kind in ("stdout", "stderr"):
            if e.seq and e.seq <= self.last_seq:
                return  # already seen (a reattach replays)
            self.last_seq = max(self.last_seq, e.seq)
            (self.out if e.kind == "stdout" else self.err).extend(e.data)
            cb = self.on_stdout if e.kind == "stdout" else self.on_stderr
            if cb:
                cb(e.data.decode("utf-8", "replace"))
        elif e.kind == "exited":
            self.exit = e

    def result(self) -> CommandResult:
        x = self.exit or Event("exited", exit_code=-1)
        return CommandResult(
            stdout=self.out.decode("utf-8", "replace"),
            stderr=self.err.decode("utf-8", "replace"),
            exit_code=x.exit_code,
            signal=x.signal,
            timed_out=x.timed_out,
            pid=self.pid,
            stdout_bytes=bytes(self.out),
            stderr_bytes=bytes(self.err),
        )


def fs_event(line: bytes | str) -> FilesystemEvent:
    """One NDJSON line of WatchDir."""
    d = json.loads(line)
    if "error" in d:
        raise errors.from_body(0, d["error"])
    t = str(d.get("type", "")).removeprefix("FILE_EVENT_TYPE_").lower()
    return FilesystemEvent(t, d.get("path", ""))


def agent_event(line: bytes | str) -> AgentEvent:
    """Parses one NDJSON line of RunAgent/ConnectAgentRun; an error line
    raises."""
    d = json.loads(line)
    if "error" in d:
        raise errors.from_body(0, d["error"])
    ev = d.get("event", d)
    seq = int(ev.get("seq", 0))
    if "started" in ev:
        s = ev["started"]
        return AgentEvent("started", seq, pid=int(s.get("pid", 0)), run_id=s.get("runId", ""))
    if "output" in ev:
        o = ev["output"]
        stream = "stderr" if o.get("stream") == "OUTPUT_STREAM_STDERR" else "stdout"
        return AgentEvent("output", seq, stream=stream, text=o.get("text", ""))
    if "fileChange" in ev:
        c = ev["fileChange"]
        change = c.get("kind", "").removeprefix("FILE_EVENT_TYPE_").lower()
        return AgentEvent("file_change", seq, path=c.get("path", ""), change=change)
    if "completed" in ev:
        c = ev["completed"]
        dur = str(c.get("duration", "0s")).rstrip("s") or "0"
        return AgentEvent("completed", seq, exit_code=int(c.get("exitCode", 0)),
                          timed_out=bool(c.get("timedOut", False)), duration=float(dur))
    return AgentEvent("unknown", seq)


class AgentFollower:
    """Folds a run's events into an AgentRun, remembering the last seq (to
    reattach after a dropped connection) and calling `on_event`."""

    def __init__(self, on_event: Optional[Callable[[AgentEvent], Any]] = None) -> None:
        self.on_event = on_event
        self.events: list = []
        self.run_id = ""
        self.last_seq = 0
        self.done: Optional[AgentEvent] = None

    def add(self, e: AgentEvent) -> None:
        if e.seq and e.seq <= self.last_seq:
            return  # already seen (a reattach replays from the cursor)
        self.last_seq = e.seq or self.last_seq
        if e.kind == "started":
            self.run_id = e.run_id
        if e.kind == "completed":
            self.done = e
        self.events.append(e)
        if self.on_event:
            self.on_event(e)

    def result(self) -> AgentRun:
        d = self.done
        if d is None:
            raise errors.TalonError(f"agent run {self.run_id} ended without completing")
        return AgentRun(self.run_id, d.exit_code, d.timed_out, d.duration, self.events)


class CodeFollower:
    """Folds RunCode's NDJSON lines into an Execution, calling the
    callbacks as events arrive."""

    def __init__(self, on_stdout: Optional[Callable[[str], Any]] = None,
                 on_stderr: Optional[Callable[[str], Any]] = None,
                 on_result: Optional[Callable[[CodeResult], Any]] = None,
                 on_error: Optional[Callable[[CodeError], Any]] = None) -> None:
        self.x = Execution()
        self.done = False
        self.cb = (on_stdout, on_stderr, on_result, on_error)

    def add(self, line: bytes | str) -> None:
        ev = json.loads(line)
        if "error" in ev:
            raise errors.from_body(0, ev["error"])
        x = self.x
        on_stdout, on_stderr, on_result, on_error = self.cb
        if "stdout" in ev:
            t = ev["stdout"].get("text", "")
            x.stdout += t
            if on_stdout:
                on_stdout(t)
        elif "stderr" in ev:
            t = ev["stderr"].get("text", "")
            x.stderr += t
            if on_stderr:
                on_stderr(t)
        elif "result" in ev:
            r = CodeResult(dict(ev["result"].get("data") or {}), bool(ev["result"].get("isMainResult")))
            x.results.append(r)
            if on_result:
                on_result(r)
        elif "codeError" in ev:
            e = ev["codeError"]
            x.error = CodeError(e.get("name", ""), e.get("value", ""), list(e.get("traceback") or []))
            if on_error:
                on_error(x.error)
        elif "completed" in ev:
            c = ev["completed"]
            x.execution_count = int(c.get("executionCount") or 0)
            x.duration = float(str(c.get("duration", "0s")).rstrip("s") or "0")
            x.interrupted = bool(c.get("interrupted"))
            x.timed_out = bool(c.get("timedOut"))
            self.done = True

    def result(self) -> Execution:
        if not self.done:
            raise errors.TalonError("the run ended without completing")
        return self.x
