"""`Sandbox.files`: reading, writing and listing the sandbox's files, and
watching a directory for changes."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

import httpx

from . import _core as core
from ._core import FileInfo, FilesystemEvent, WriteEntry
from ._endpoints import list_dir, make_dir, move_path, remove_path, stat_path
from ._http import _read_json, _user, call

if TYPE_CHECKING:
    from .sandbox import Sandbox


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
