"""The asyncio SDK: the same shape as `Sandbox`, every call awaited.

`AsyncSandbox` is defined here; each of its parts has a module of its
own (`_async_commands`, `_async_files`, `_async_pty`, `_async_agent`,
`_async_browser`, `_async_code`), as has the plumbing of its calls
(`_async_http`). Their names are imported here too: every name this
module had before it was split still resolves."""

from __future__ import annotations

# Not every name imported below is used here: together they are the
# names this module had before the split, kept so imports from it still work.
import asyncio
import json
from typing import Any, AsyncIterator, Callable, Optional

import httpx

from . import _core as core
from ._api.client import AuthenticatedClient
from ._async_agent import AsyncAgent
from ._async_browser import AsyncBrowser
from ._async_code import AsyncCode
from ._async_commands import AsyncCommandHandle, AsyncCommands
from ._async_files import AsyncFiles, AsyncWatchHandle
from ._async_http import _lines, call
from ._async_pty import AsyncPty, AsyncPtyHandle
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
