"""`AsyncSandbox.files`: `Sandbox.files` for asyncio."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Optional

from . import _core as core
from ._async_http import call
from ._core import FileInfo, FilesystemEvent, WriteEntry
from ._endpoints import list_dir, make_dir, move_path, remove_path, stat_path
from ._http import _user

if TYPE_CHECKING:
    from .async_sandbox import AsyncSandbox


class AsyncWatchHandle:
    """A running watch: events go to the callback, if given, and to
    `get_new_events()`; `await stop()` ends it."""

    def __init__(self, events: AsyncIterator[FilesystemEvent],
                 on_event: Optional[Callable[[FilesystemEvent], Any]]) -> None:
        self._events: list[FilesystemEvent] = []
        self._on_event = on_event
        self.error: Optional[BaseException] = None
        self._task = asyncio.create_task(self._read(events))

    async def _read(self, events: AsyncIterator[FilesystemEvent]) -> None:
        try:
            async for ev in events:
                self._events.append(ev)
                if self._on_event:
                    r = self._on_event(ev)
                    if asyncio.iscoroutine(r):
                        await r
        except asyncio.CancelledError:
            pass
        except Exception as e:
            self.error = e

    def get_new_events(self) -> list[FilesystemEvent]:
        out, self._events = self._events, []
        return out

    async def stop(self) -> None:
        self._task.cancel()
        try:
            await self._task
        except BaseException:
            pass


class AsyncFiles:
    def __init__(self, sandbox: "AsyncSandbox") -> None:
        self._s = sandbox

    async def write(self, path: str, data: bytes | str | Any, *, mode: int = 0, create_parents: bool = True,
                    user: Optional[str] = None) -> FileInfo:
        raw = data.encode() if isinstance(data, str) else data
        params = _user({"path": path, "create_parents": str(create_parents).lower()}, user)
        if mode:
            params["mode"] = str(mode)
        http = self._s._client.get_async_httpx_client()
        resp = await http.post(core.sandbox_path(self._s.sandbox_id, "/files:write"), params=params,
                               content=raw, headers={"content-type": "application/octet-stream"})
        core.check(resp)
        return FileInfo.of(resp.json().get("info", {}))

    async def write_files(self, files: list[WriteEntry | dict], *, user: Optional[str] = None) -> list[FileInfo]:
        out = []
        for f in files:
            path, data = (f.path, f.data) if isinstance(f, WriteEntry) else (f["path"], f["data"])
            out.append(await self.write(path, data, user=user))
        return out

    async def read(self, path: str, *, format: str = "text",
                   user: Optional[str] = None) -> str | bytes | AsyncIterator[bytes]:
        if format not in ("text", "bytes", "stream"):
            raise core.errors.InvalidArgumentError(f"format is 'text', 'bytes' or 'stream', not {format!r}")
        http = self._s._client.get_async_httpx_client()
        url = core.sandbox_path(self._s.sandbox_id, "/files:read")
        params = _user({"path": path}, user)
        headers = {"accept": "application/octet-stream"}
        if format == "stream":
            async def chunks() -> AsyncIterator[bytes]:
                async with http.stream("GET", url, params=params, headers=headers) as resp:
                    if not resp.is_success:
                        await resp.aread()
                        core.check(resp)
                    async for chunk in resp.aiter_bytes():
                        yield chunk

            return chunks()
        resp = await http.get(url, params=params, headers=headers)
        core.check(resp)
        return resp.content if format == "bytes" else resp.content.decode("utf-8")

    async def list(self, path: str = ".", depth: int = 1, *, user: Optional[str] = None) -> list[FileInfo]:
        r = await call(self._s._client, list_dir, self._s.sandbox_id, path=path, depth=depth, user=user)
        return [FileInfo.of(e) for e in r.get("entries", [])]

    async def stat(self, path: str, *, user: Optional[str] = None) -> FileInfo:
        r = await call(self._s._client, stat_path, self._s.sandbox_id, path=path, user=user)
        return FileInfo.of(r.get("info", {}))

    get_info = stat

    async def exists(self, path: str, *, user: Optional[str] = None) -> bool:
        try:
            await self.stat(path, user=user)
            return True
        except core.errors.NotFoundError:
            return False

    async def make_dir(self, path: str, parents: bool = True, *, user: Optional[str] = None) -> None:
        await call(self._s._client, make_dir, self._s.sandbox_id,
                   body=_user({"path": path, "parents": parents}, user))

    async def rename(self, old: str, new: str, *, user: Optional[str] = None) -> None:
        await call(self._s._client, move_path, self._s.sandbox_id,
                   body=_user({"sourcePath": old, "destinationPath": new}, user))

    async def remove(self, path: str, recursive: bool = False, *, user: Optional[str] = None) -> None:
        await call(self._s._client, remove_path, self._s.sandbox_id, path=path, recursive=recursive, user=user)

    async def _watch_stream(self, path: str, recursive: bool, user: Optional[str]) -> AsyncIterator[FilesystemEvent]:
        http = self._s._client.get_async_httpx_client()
        async with http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                               params=_user({"path": path, "recursive": str(recursive).lower()}, user)) as resp:
            if not resp.is_success:
                await resp.aread()
                core.check(resp)
            async for line in resp.aiter_lines():
                if line.strip():
                    yield core.fs_event(line)

    async def watch_dir(self, path: str, on_event: Optional[Callable[[FilesystemEvent], Any]] = None, *,
                        recursive: bool = False, user: Optional[str] = None) -> AsyncWatchHandle:
        """Watches `path` until `await stop()`: poll `get_new_events()`, or
        pass `on_event` (a function or a coroutine function)."""
        http = self._s._client.get_async_httpx_client()
        ctx = http.stream("GET", core.sandbox_path(self._s.sandbox_id, "/files:watch"),
                          params=_user({"path": path, "recursive": str(recursive).lower()}, user))
        # Open (or be refused) before returning, so no change made after
        # this call returns is missed.
        resp = await ctx.__aenter__()
        if not resp.is_success:
            await resp.aread()
            await ctx.__aexit__(None, None, None)
            core.check(resp)

        async def events() -> AsyncIterator[FilesystemEvent]:
            try:
                async for line in resp.aiter_lines():
                    if line.strip():
                        yield core.fs_event(line)
            finally:
                await ctx.__aexit__(None, None, None)

        return AsyncWatchHandle(events(), on_event)

    async def watch(self, path: str, recursive: bool = False) -> AsyncIterator[FilesystemEvent]:
        """Yields changes under `path` until the loop breaks."""
        async for ev in self._watch_stream(path, recursive, None):
            yield ev
