"""The SDK's values: what calls return (sandboxes, snapshots, metrics,
files, command results, agent runs, the browser, code runs) and what
`files.write_files` takes. Plain dataclasses, shared by the sync and async
SDKs: some parse a REST answer's JSON themselves (`of`), `_wire` and
`_streams` build the others."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class SandboxInfo:
    sandbox_id: str
    state: str
    image: str
    raw: dict = field(repr=False, default_factory=dict)
    metadata: dict = field(default_factory=dict)
    started_at: str = ""
    end_at: str = ""
    cpu_millis: int = 0
    memory_mib: int = 0
    snapshot_id: str = ""
    # "container" or "gvisor".
    isolation: str = "container"

    @property
    def template_id(self) -> str:
        """E2B's name for the image."""
        return self.image

    @staticmethod
    def of(d: dict) -> "SandboxInfo":
        state = str(d.get("state", "")).removeprefix("SANDBOX_STATE_").lower()
        res = d.get("resources") or {}
        return SandboxInfo(d.get("sandboxId", ""), state, d.get("image", ""), d,
                           metadata=dict(d.get("metadata") or {}), started_at=d.get("createTime", ""),
                           end_at=d.get("expireTime", ""), cpu_millis=int(res.get("cpuMillis", 0) or 0),
                           memory_mib=int(res.get("memoryMib", 0) or 0),
                           snapshot_id=d.get("snapshotId", ""),
                           isolation=str(d.get("isolation", "ISOLATION_CONTAINER")).removeprefix("ISOLATION_").lower())


@dataclass
class SnapshotInfo:
    """A snapshot of a sandbox's filesystem (CreateSnapshot): new sandboxes
    start from it with `Sandbox.create(snapshot_id=...)`."""

    snapshot_id: str
    name: str
    sandbox_id: str
    image: str
    size_bytes: int
    created_at: str
    raw: dict = field(repr=False, default_factory=dict)

    @staticmethod
    def of(d: dict) -> "SnapshotInfo":
        d = d.get("snapshot", d)
        return SnapshotInfo(d.get("snapshotId", ""), d.get("name", ""), d.get("sandboxId", ""),
                            d.get("image", ""), int(d.get("sizeBytes", 0) or 0), d.get("createTime", ""), d)


@dataclass
class SandboxMetrics:
    """What a sandbox uses at one moment (GetSandboxMetrics)."""

    timestamp: str
    cpu_count: int
    cpu_used_pct: float
    mem_used: int
    mem_total: int
    disk_used: int
    disk_total: int

    @staticmethod
    def of(d: dict) -> "SandboxMetrics":
        m = d.get("metrics", d)
        return SandboxMetrics(m.get("sampleTime", ""), int(m.get("cpuCount", 0) or 0),
                              float(m.get("cpuUsedPct", 0) or 0), int(m.get("memUsedBytes", 0) or 0),
                              int(m.get("memTotalBytes", 0) or 0), int(m.get("diskUsedBytes", 0) or 0),
                              int(m.get("diskTotalBytes", 0) or 0))


@dataclass
class WriteEntry:
    """One file of `files.write_files`."""

    path: str
    data: bytes | str


@dataclass
class CommandResult:
    """A finished process: its output and how it ended."""

    stdout: str
    stderr: str
    exit_code: int
    signal: int = 0
    timed_out: bool = False
    pid: int = 0
    stdout_bytes: bytes = field(default=b"", repr=False)
    stderr_bytes: bytes = field(default=b"", repr=False)


@dataclass
class FileInfo:
    path: str
    name: str
    type: str
    size: int
    mode: int

    @property
    def is_dir(self) -> bool:
        return self.type == "dir"

    @staticmethod
    def of(d: dict) -> "FileInfo":
        t = str(d.get("type", "")).removeprefix("FILE_TYPE_").lower()
        t = {"directory": "dir"}.get(t, t)
        return FileInfo(d.get("path", ""), d.get("name", ""), t, int(d.get("size", 0) or 0),
                        int(d.get("mode", 0) or 0))


@dataclass
class FilesystemEvent:
    type: str
    path: str


@dataclass
class AgentEvent:
    """One event of an agent run, numbered from 1 (`seq`): `kind` is
    "started" (`pid`, `run_id`), "output" (`stream`, `text`: one line),
    "file_change" (`path`, `change`: "create", "write", "remove", "rename"
    or "chmod") or "completed" (`exit_code`, `timed_out`, `duration` s)."""

    kind: str
    seq: int = 0
    pid: int = 0
    run_id: str = ""
    stream: str = ""
    text: str = ""
    path: str = ""
    change: str = ""
    exit_code: int = 0
    timed_out: bool = False
    duration: float = 0.0


@dataclass
class AgentRun:
    """A run that has completed: its id, how it ended, and every event."""

    run_id: str
    exit_code: int
    timed_out: bool
    duration: float
    events: list = field(default_factory=list)

    @property
    def output(self) -> str:
        return "".join(e.text + "\n" for e in self.events if e.kind == "output")

    @property
    def file_changes(self) -> list:
        return [e for e in self.events if e.kind == "file_change"]


@dataclass
class BrowserInfo:
    """The sandbox's browser. `cdp_url` is what Playwright's
    `chromium.connect_over_cdp` takes (Puppeteer connects by
    `websocket_debugger_url`, its `browserWSEndpoint`); `live_view_url` is a page that shows its screen as it changes.
    Both carry a token that expires at `expire_time` (`browser.get()`
    gives fresh ones); they are empty unless the browser runs and the
    caller may drive it. `state` is "starting", "running", "stopped" or
    "crashed" (then `error` says how it ended)."""

    state: str
    cdp_url: str = ""
    websocket_debugger_url: str = ""
    live_view_url: str = ""
    expire_time: str = ""
    pid: int = 0
    window_size: str = ""
    error: str = ""


@dataclass
class CodeContext:
    """A kernel inside the sandbox that keeps its state between runs."""

    id: str
    language: str
    cwd: str
    execution_count: int = 0


@dataclass
class CodeResult:
    """A rich result by MIME type (`data`); `is_main_result` marks the
    run's own value. Binary types (PNG, …) are base64 text, as Jupyter
    sends them; `png` decodes it."""

    data: dict
    is_main_result: bool = False

    @property
    def text(self) -> Optional[str]:
        return self.data.get("text/plain")

    @property
    def html(self) -> Optional[str]:
        return self.data.get("text/html")

    @property
    def json(self) -> Any:
        j = self.data.get("application/json")
        return json.loads(j) if j is not None else None

    @property
    def png(self) -> Optional[bytes]:
        p = self.data.get("image/png")
        return base64.b64decode(p) if p is not None else None

    def formats(self) -> list:
        return sorted(self.data)


@dataclass
class CodeError:
    """What the code raised: `name` ("ZeroDivisionError"), `value` (its
    message) and `traceback`, one entry per frame."""

    name: str
    value: str
    traceback: list


@dataclass
class Execution:
    """A run: its output, rich results, error (None when it succeeded)
    and how it ended. `text` is the main result's text/plain."""

    stdout: str = ""
    stderr: str = ""
    results: list = field(default_factory=list)
    error: Optional[CodeError] = None
    execution_count: int = 0
    duration: float = 0.0
    interrupted: bool = False
    timed_out: bool = False

    @property
    def text(self) -> Optional[str]:
        for r in self.results:
            if r.is_main_result:
                return r.text
        return None
