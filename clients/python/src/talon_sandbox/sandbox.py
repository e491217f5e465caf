"""The synchronous SDK: `Sandbox.create()`, then `sandbox.commands`,
`sandbox.files` and `sandbox.pty`. See `async_sandbox` for asyncio.

`Sandbox` is defined here; each of its parts (commands, files, pty,
agent, browser, code) has a module of its own, as do the plumbing of its
calls (`_http`) and the generated operations it calls (`_endpoints`).
Their names are imported here too: every name this module had before it
was split still resolves."""

from __future__ import annotations

# Not every name imported below is used here: together they are the
# names this module had before the split, kept so imports from it still work.
import threading
from typing import Any, Callable, Iterator, Optional

import httpx

from . import _core as core
from ._agent import Agent
from ._api.client import AuthenticatedClient
from ._browser import Browser
from ._code import Code
from ._commands import CommandHandle, Commands
from ._core import (
    CommandResult,
    FileInfo,
    FilesystemEvent,
    SandboxInfo,
    SandboxMetrics,
    SnapshotInfo,
    WriteEntry,
)
from ._endpoints import (
    close_stdin,
    close_stdin_tag,
    create_file_url,
    create_sandbox,
    create_snapshot,
    delete_sandbox,
    delete_snapshot,
    fork_sandbox,
    get_metrics,
    get_sandbox,
    get_snapshot,
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
from ._files import Files, WatchHandle
from ._http import _body, _lines, _lines_raw, _read_json, _user, call
from ._pty import Pty, PtyHandle


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
