"""What the sync and async SDKs share: configuration, the REST paths and
bodies of the calls they make, and the parsing of responses and stream
lines. Unary calls go through the generated layer (`_api`, made by
openapi-python-client from the OpenAPI document); streams (NDJSON lines)
and raw uploads and downloads go through its httpx client directly."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import ipaddress
import json
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import quote

import httpx

from . import errors
from ._api.client import AuthenticatedClient

DEFAULT_URL = "http://127.0.0.1:8080"


@dataclass
class Config:
    """Where the platform is and who calls it. Unset values come from
    TALON_API_KEY and TALON_URL."""

    api_key: Optional[str] = None
    # One URL, or several servers of one platform comma-separated
    # ("http://a:8080,http://b:8080"): calls go to the first that answers
    # (see _Transport).
    base_url: Optional[str] = None
    request_timeout: float = 60.0
    # HTTP/2: None (the default, or TALON_HTTP2) speaks it over https when
    # the `h2` package is there (the `http2` extra) and the proxy in front
    # offers it; True also speaks it over plain http by prior knowledge,
    # which the gateway itself serves (h2c) but a proxy in between may
    # not; False never does.
    http2: Optional[bool] = None

    def resolved(self) -> "Config":
        key = self.api_key or os.environ.get("TALON_API_KEY")
        if not key:
            raise errors.AuthenticationError("no API key: pass api_key= or set TALON_API_KEY")
        raw = self.base_url or os.environ.get("TALON_URL") or DEFAULT_URL
        urls = [u.strip().rstrip("/") for u in raw.split(",")]
        if not all(urls):
            raise errors.InvalidArgumentError(f"an empty URL in {raw!r}")
        url = ",".join(urls)
        http2 = self.http2
        if http2 is None and os.environ.get("TALON_HTTP2"):
            flag = os.environ["TALON_HTTP2"].lower()
            if flag not in ("1", "true", "0", "false"):
                raise errors.InvalidArgumentError(f"TALON_HTTP2 is 1/true or 0/false, not {flag!r}")
            http2 = flag in ("1", "true")
        return Config(key, url, self.request_timeout, http2)

    def urls(self) -> list:
        """The servers' URLs, first the one calls try first."""
        return (self.base_url or DEFAULT_URL).split(",")

    def _key(self) -> tuple:
        c = self.resolved()
        return (c.api_key, c.base_url, c.request_timeout, c.http2)

    def _versions(self) -> dict:
        """The transport's HTTP versions for this configuration."""
        have_h2 = importlib.util.find_spec("h2") is not None
        if self.http2 and not have_h2:
            raise errors.InvalidArgumentError(
                "HTTP/2 needs the h2 package: pip install 'talon-sandbox[http2]'")
        if self.http2 is False or not have_h2:
            return {}
        if (self.base_url or "").startswith("https://"):
            return {"http2": True}
        if self.http2:
            return {"http1": False, "http2": True}  # prior knowledge (h2c)
        return {}

    def _new_client(self, asynchronous: bool = False) -> AuthenticatedClient:
        c = self.resolved()
        v = c._versions()
        transport = (_AsyncTransport(httpx.AsyncHTTPTransport(**v), c.urls()) if asynchronous
                     else _Transport(httpx.HTTPTransport(**v), c.urls()))
        return AuthenticatedClient(
            base_url=c.urls()[0],
            token=c.api_key,
            timeout=httpx.Timeout(c.request_timeout, read=None),
            raise_on_unexpected_status=False,
            httpx_args={"transport": transport},
        )

    def client(self) -> AuthenticatedClient:
        """The client of this configuration, one per process: its
        connection pool is kept between calls (a new client per create or
        connect paid a connection, about 20 ms, every time)."""
        key = self._key()
        with _CLIENTS_LOCK:
            c = _CLIENTS.get(key)
            if c is None:
                c = _CLIENTS[key] = self._new_client()
            return c

    def async_client(self) -> AuthenticatedClient:
        """As `client`, one per configuration and event loop (an asyncio
        connection pool belongs to the loop that made it)."""
        key = self._key()
        loop = asyncio.get_running_loop()
        with _CLIENTS_LOCK:
            per_loop = _ASYNC_CLIENTS.setdefault(loop, {})
            c = per_loop.get(key)
            if c is None:
                c = per_loop[key] = self._new_client(asynchronous=True)
            return c


def _unreachable(e: httpx.TransportError, base_url: str) -> errors.TalonError:
    if isinstance(e, httpx.TimeoutException):
        return errors.TimeoutError(f"{base_url}: no answer in time ({e})")
    return errors.UnavailableError(f"cannot reach Talon at {base_url}: {e}")


class _Servers:
    """Several servers of one platform: requests go to the current one. A
    request that could not connect there (it reached no server) is sent to
    the next ones in turn, and the first that answers becomes current; one
    that failed after it was sent is not resent (a create may have
    happened) and raises UnavailableError, but the next call goes to the
    next server, so a retry reaches a live one."""

    def __init__(self, urls: list) -> None:
        self.urls = [httpx.URL(u) for u in urls]
        self.current = 0

    def at(self, request: httpx.Request, i: int) -> httpx.Request:
        if i == 0:
            return request
        first, to = self.urls[0], self.urls[i]
        path = request.url.raw_path.decode()
        prefix = first.raw_path.decode().rstrip("/")
        rest = path[len(prefix):] if prefix and path.startswith(prefix) else path
        url = request.url.copy_with(scheme=to.scheme, host=to.host, port=to.port,
                                    raw_path=(to.raw_path.decode().rstrip("/") + rest).encode())
        request.url = url
        request.headers["Host"] = url.netloc.decode()
        return request

    def order(self) -> list:
        n = len(self.urls)
        return [(self.current + k) % n for k in range(n)]

    def failed(self, i: int, k: int, e: httpx.TransportError) -> None:
        """After try `k` (at server `i`) failed: the next server becomes
        current; raises unless the request reached no server and another
        is left to try."""
        if len(self.urls) > 1 and self.current == i:
            self.current = (i + 1) % len(self.urls)
        unsent = isinstance(e, (httpx.ConnectError, httpx.ConnectTimeout))
        if not unsent or k == len(self.urls) - 1:
            raise _unreachable(e, str(self.urls[i])) from e


class _Transport(httpx.BaseTransport):
    """httpx's transport, with its connection failures raised as the SDK's
    own UnavailableError (or TimeoutError): callers catch TalonError only.
    With several servers, see _Servers."""

    def __init__(self, inner: httpx.BaseTransport, urls: list) -> None:
        self._inner, self._servers = inner, _Servers(urls)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        s = self._servers
        for k, i in enumerate(s.order()):
            try:
                resp = self._inner.handle_request(s.at(request, i))
                s.current = i
                return resp
            except httpx.TransportError as e:
                s.failed(i, k, e)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._inner.close()


class _AsyncTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, urls: list) -> None:
        self._inner, self._servers = inner, _Servers(urls)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        s = self._servers
        for k, i in enumerate(s.order()):
            try:
                resp = await self._inner.handle_async_request(s.at(request, i))
                s.current = i
                return resp
            except httpx.TransportError as e:
                s.failed(i, k, e)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._inner.aclose()


_CLIENTS: dict = {}
_ASYNC_CLIENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_CLIENTS_LOCK = threading.Lock()


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


STATES = ("pending", "starting", "running", "paused", "stopping", "stopped", "failed", "deleted")


def page_params(page_size: Optional[int], page_token: Optional[str], **filters: Any) -> dict:
    """A list call's page and its plain filters (those set) as query
    parameters."""
    p: dict[str, Any] = {k: v for k, v in filters.items() if v}
    if page_size:
        p["pageSize"] = page_size
    if page_token:
        p["pageToken"] = page_token
    return p


def page(resp: Any, key: str, of: Callable[[dict], Any]) -> tuple[list, str]:
    """One page of a list call's answer: its `key` items made by `of`, and
    the next page's token ("" on the last)."""
    check(resp)
    r = parsed(resp)
    return [of(x) for x in r.get(key, [])], r.get("nextPageToken", "")


def list_params(metadata: Optional[dict], state: Optional[list[str] | str], page_size: Optional[int],
                page_token: Optional[str]) -> dict:
    """ListSandboxes' filters and page as query parameters (deepObject
    metadata)."""
    p = page_params(page_size, page_token)
    for k, v in (metadata or {}).items():
        p[f"metadata[{k}]"] = v
    states = [state] if isinstance(state, str) else list(state or [])
    for st in states:
        if st not in STATES:
            raise errors.InvalidArgumentError(f"unknown state {st!r}: one of {', '.join(STATES)}")
    if states:
        p["states"] = ["SANDBOX_STATE_" + st.upper() for st in states]
    return p


def finish(r: "CommandResult", timeout: Optional[float]) -> "CommandResult":
    """A finished command's result, or the error it stands for: killed at
    its timeout, or ended with a non-zero code or a signal."""
    if r.timed_out:
        raise errors.CommandTimeoutError(r, timeout or 0)
    if r.exit_code != 0 or r.signal:
        raise errors.CommandExitError(r)
    return r


# Foreground commands are killed after this long unless the caller sets
# `timeout` (0 or None: no limit), like E2B's default.
DEFAULT_COMMAND_TIMEOUT = 60.0

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


def check(resp: httpx.Response, body: Any = None) -> None:
    """Raises the typed error a non-2xx response stands for."""
    if 200 <= resp.status_code < 300:
        return
    if body is None:
        try:
            body = json.loads(resp.content or b"null")
        except ValueError:
            body = resp.text
    raise errors.from_body(resp.status_code, body, resp.headers.get("x-request-id"))


def parsed(resp: Any) -> dict:
    """The generated layer's Response: the JSON of a 2xx, or an error. An
    answer that is not JSON (a proxy's page, say) is an error too, never
    an empty result."""
    try:
        body = json.loads(resp.content or b"{}")
    except ValueError:
        body = None
    if int(resp.status_code) >= 300:
        raise errors.from_body(int(resp.status_code), body, resp.headers.get("x-request-id"))
    if not isinstance(body, dict):
        text = (resp.content or b"")[:200].decode("utf-8", "replace")
        raise errors.TalonError(
            f"the server answered HTTP {int(resp.status_code)} with something that is not a JSON object: {text!r}",
            status=int(resp.status_code))
    return body


def not_json(e: ValueError) -> errors.TalonError:
    return errors.TalonError(f"the server answered with something that is not a JSON object ({e})")


def argv(cmd: str | list[str]) -> list[str]:
    """A string runs under `sh -c`, a list is the argv itself."""
    return ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)


def process_body(cmd: str | list[str], *, envs: Optional[dict] = None, cwd: Optional[str] = None,
                 timeout: Optional[float] = None, tag: Optional[str] = None, stdin: bool = False,
                 pty: Optional[tuple[int, int]] = None, user: Optional[str] = None) -> dict:
    b: dict[str, Any] = {"command": argv(cmd), "stdin": stdin}
    if envs:
        b["env"] = dict(envs)
    if cwd:
        b["cwd"] = cwd
    if user:
        b["user"] = user
    if tag:
        b["tag"] = tag
    if timeout:
        b["timeout"] = f"{float(timeout):g}s"
    if pty:
        b["pty"] = {"cols": pty[0], "rows": pty[1]}
    return b


def sandbox_path(sid: str, rest: str = "") -> str:
    return f"/v1/sandboxes/{quote(sid, safe='')}{rest}"


def process_path(sid: str, pid: Optional[int] = None, tag: Optional[str] = None, verb: str = "") -> str:
    if tag:
        return sandbox_path(sid, f"/processes/tags/{quote(tag, safe='')}{verb}")
    return sandbox_path(sid, f"/processes/{int(pid or 0)}{verb}")


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


def network_policy(allow_internet_access: Optional[bool], network: Optional[dict]) -> Optional[dict]:
    """E2B's network options as an egress policy: no internet access is a
    sealed sandbox; `allow_out` (CIDRs, IPs or domain names) is an
    allowlist. Talon denies private ranges whatever the policy, and has no
    deny list beyond "everything not allowed": `deny_out` may only be
    ["0.0.0.0/0"] (which an allowlist already means)."""
    if network:
        unknown = set(network) - {"allow_out", "deny_out", "allowOut", "denyOut"}
        if unknown:
            raise errors.InvalidArgumentError(f"unknown network options {sorted(unknown)}")
        allow = list(network.get("allow_out") or network.get("allowOut") or [])
        deny = list(network.get("deny_out") or network.get("denyOut") or [])
        if deny and deny != ["0.0.0.0/0"]:
            raise errors.InvalidArgumentError(
                'deny_out may only be ["0.0.0.0/0"]: Talon denies what is not allowed, and private ranges always')
        if allow:
            cidrs, domains = [], []
            for a in allow:
                try:
                    cidrs.append(str(ipaddress.ip_network(a, strict=False)))
                except ValueError:
                    domains.append(a)
            return {"mode": "EGRESS_MODE_ALLOWLIST", "allowCidrs": cidrs, "allowDomains": domains}
        if deny:
            return {"mode": "EGRESS_MODE_SEALED"}
    if allow_internet_access is False:
        return {"mode": "EGRESS_MODE_SEALED"}
    return None


# The isolation levels a create may ask for (see `Sandbox.create`).
ISOLATIONS = ("container", "gvisor", "microvm")


def create_body(image: str, envs: Optional[dict], timeout: Optional[float], cpu_millis: Optional[int],
                memory_mib: Optional[int], labels: Optional[dict], secrets: Optional[list[str]],
                metadata: Optional[dict] = None, allow_internet_access: Optional[bool] = None,
                network: Optional[dict] = None, on_timeout: Optional[str] = None,
                idle_timeout: Optional[float] = None, auto_resume: Optional[bool] = None,
                snapshot_id: Optional[str] = None, isolation: Optional[str] = None) -> dict:
    # From a snapshot, the image is the snapshot's (an image too is refused).
    b: dict[str, Any] = {"snapshotId": snapshot_id} if snapshot_id else {"image": image or "host"}
    if snapshot_id and image:
        b["image"] = image
    if isolation is not None:
        if isolation not in ISOLATIONS:
            raise errors.InvalidArgumentError(f"isolation is one of {', '.join(ISOLATIONS)}, not {isolation!r}")
        b["isolation"] = "ISOLATION_" + isolation.upper()
    if idle_timeout:
        b["idleTimeout"] = f"{float(idle_timeout):g}s"
    if auto_resume:
        b["autoResume"] = True
    if metadata:
        b["metadata"] = {str(k): str(v) for k, v in metadata.items()}
    policy = network_policy(allow_internet_access, network)
    if policy:
        b["networkPolicy"] = policy
    if on_timeout is not None:
        actions = {"pause": "TIMEOUT_ACTION_PAUSE", "kill": "TIMEOUT_ACTION_DELETE",
                   "delete": "TIMEOUT_ACTION_DELETE"}
        if on_timeout not in actions:
            raise errors.InvalidArgumentError(f"on_timeout is 'pause' or 'kill', not {on_timeout!r}")
        b["timeoutAction"] = actions[on_timeout]
    if envs:
        b["env"] = dict(envs)
    if labels:
        b["labels"] = dict(labels)
    if secrets:
        b["secretNames"] = list(secrets)
    if timeout:
        b["timeout"] = f"{float(timeout):g}s"
    res = {}
    if cpu_millis:
        res["cpuMillis"] = str(cpu_millis)
    if memory_mib:
        res["memoryMib"] = str(memory_mib)
    if res:
        b["resources"] = res
    return b


def with_ttl(body: dict, ttl: Optional[float]) -> dict:
    """A link request's body, with its lifetime in seconds when given."""
    if ttl:
        body["ttl"] = f"{float(ttl):g}s"
    return body


def preview_url(base_url: str, sandbox_id: str, port: int) -> str:
    """The path-prefix preview address of a port (see the preview docs)."""
    return f"{base_url}/preview/{sandbox_id}/{int(port)}/"


def preview_link(base_url: str, sandbox_id: str, port: int, token: dict, path: bool) -> str:
    """A preview link from a CreatePreviewToken answer: the server's link,
    or in path form the path-prefix address with the token."""
    if path:
        return preview_url(base_url, sandbox_id, port) + "?token=" + quote(token["token"], safe="")
    return token["url"]


def fs_event(line: bytes | str) -> FilesystemEvent:
    """One NDJSON line of WatchDir."""
    d = json.loads(line)
    if "error" in d:
        raise errors.from_body(0, d["error"])
    t = str(d.get("type", "")).removeprefix("FILE_EVENT_TYPE_").lower()
    return FilesystemEvent(t, d.get("path", ""))


def connectable(info: SandboxInfo) -> None:
    """A deleted sandbox is gone for `connect`, as in E2B; a failed one
    cannot be resumed."""
    if info.state == "deleted":
        raise errors.NotFoundError(f"sandbox {info.sandbox_id} was deleted")
    if info.state == "failed":
        raise errors.FailedPreconditionError(
            f"sandbox {info.sandbox_id} failed: {info.raw.get('stateMessage', '')}")


class either:
    """A method that is an instance method on an instance and a static
    one on the class: `sbx.kill()` and `Sandbox.kill(sandbox_id)`."""

    def __init__(self, on_instance: Callable, on_class: Callable) -> None:
        self._i = on_instance
        self._c = on_class

    def __get__(self, obj: Any, cls: Any = None) -> Callable:
        if obj is None:
            return self._c.__func__ if isinstance(self._c, staticmethod) else self._c
        return self._i.__get__(obj, cls)


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


def agent_body(command: str | list[str], prompt: str, envs: Optional[dict], cwd: Optional[str],
               user: Optional[str], secrets: Optional[list[str]], timeout: Optional[float]) -> dict:
    argv = ["/bin/bash", "-lc", command] if isinstance(command, str) else list(command)
    body: dict = {"command": argv, "prompt": prompt}
    if envs:
        body["env"] = dict(envs)
    if cwd:
        body["cwd"] = cwd
    if user:
        body["user"] = user
    if secrets:
        body["secretNames"] = list(secrets)
    if timeout:
        body["timeout"] = f"{float(timeout)}s"
    return body


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


def browser_info(body: Any) -> BrowserInfo:
    b = (body or {}).get("browser") or {}
    state = str(b.get("state") or "BROWSER_STATE_STOPPED").removeprefix("BROWSER_STATE_").lower()
    return BrowserInfo(state=state, cdp_url=b.get("cdpUrl", ""),
                       websocket_debugger_url=b.get("websocketDebuggerUrl", ""),
                       live_view_url=b.get("liveViewUrl", ""), expire_time=b.get("expireTime", ""),
                       pid=int(b.get("pid") or 0), window_size=b.get("windowSize", ""), error=b.get("error", ""))


def browser_start_body(window_size: Optional[str], url_ttl: Optional[float]) -> dict:
    body: dict = {}
    if window_size:
        body["windowSize"] = window_size
    if url_ttl is not None:
        body["urlTtl"] = f"{int(url_ttl)}s"
    return body


def screenshot_png(body: Any) -> bytes:
    return base64.b64decode((body or {}).get("png") or "")


LANGUAGES = {"python": "CODE_LANGUAGE_PYTHON", "javascript": "CODE_LANGUAGE_JAVASCRIPT",
             "js": "CODE_LANGUAGE_JAVASCRIPT", "bash": "CODE_LANGUAGE_BASH"}


def code_language(language: str) -> str:
    try:
        return LANGUAGES[language.lower()]
    except KeyError:
        raise errors.InvalidArgumentError(
            f"unknown language {language!r}: python, javascript or bash") from None


@dataclass
class CodeContext:
    """A kernel inside the sandbox that keeps its state between runs."""

    id: str
    language: str
    cwd: str
    execution_count: int = 0


def code_context(body: Any) -> CodeContext:
    c = (body or {}).get("context", body) or {}
    lang = str(c.get("language") or "").removeprefix("CODE_LANGUAGE_").lower()
    return CodeContext(c.get("contextId", ""), lang, c.get("cwd", ""), int(c.get("executionCount") or 0))


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


def run_code_body(code: str, language: Optional[str], context: Any, timeout: Optional[float]) -> dict:
    body: dict = {"code": code}
    if context is not None:
        body["contextId"] = context.id if isinstance(context, CodeContext) else str(context)
    if language:
        body["language"] = code_language(language)
    if timeout is not None:
        body["timeout"] = f"{timeout:g}s"
    return body


def context_body(language: str, cwd: Optional[str], envs: Optional[dict]) -> dict:
    body: dict = {"language": code_language(language)}
    if cwd:
        body["cwd"] = cwd
    if envs:
        body["env"] = dict(envs)
    return body


def context_id(context: Any) -> str:
    return context.id if isinstance(context, CodeContext) else str(context)
