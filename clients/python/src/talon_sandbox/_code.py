"""`Sandbox.code`: code run in kernels (contexts) that keep their state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from . import _core as core
from ._http import _lines_raw, _read_json

if TYPE_CHECKING:
    from .sandbox import Sandbox


class Code:
    """Code contexts: kernels inside the sandbox (Python in ipykernel,
    JavaScript in Node, Bash) that keep their state between runs.
    `run(code)` uses the sandbox's default context of its language."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._s = sandbox

    def _call(self, method: str, rest: str, **kw: Any) -> Any:
        http = self._s._client.get_httpx_client()
        resp = http.request(method, core.sandbox_path(self._s.sandbox_id, rest), **kw)
        body = _read_json(resp)
        core.check(resp, body)
        return body

    def run(self, code: str, *, language: Optional[str] = None, context: Any = None,
            timeout: Optional[float] = None, on_stdout: Optional[Callable[[str], Any]] = None,
            on_stderr: Optional[Callable[[str], Any]] = None,
            on_result: Optional[Callable[[core.CodeResult], Any]] = None,
            on_error: Optional[Callable[[core.CodeError], Any]] = None) -> core.Execution:
        """Runs `code` in `context` (a CodeContext or its id), or in the
        default context of `language` ("python" when neither is given),
        calling the callbacks as output arrives. An error the code raises
        is `Execution.error`, not an exception."""
        f = core.CodeFollower(on_stdout, on_stderr, on_result, on_error)
        body = core.run_code_body(code, language, context, timeout)
        http = self._s._client.get_httpx_client()
        with http.stream("POST", core.sandbox_path(self._s.sandbox_id, "/code:run"), json=body,
                         timeout=None) as resp:
            for line in _lines_raw(resp):
                f.add(line)
        return f.result()

    def create_context(self, language: str = "python", *, cwd: Optional[str] = None,
                       envs: Optional[dict] = None) -> core.CodeContext:
        """Starts a context (its kernel answers before this returns)."""
        return core.code_context(self._call("POST", "/code-contexts", json=core.context_body(language, cwd, envs),
                                             timeout=90))

    def list_contexts(self) -> list:
        body = self._call("GET", "/code-contexts")
        return [core.code_context(c) for c in (body or {}).get("contexts", [])]

    def restart_context(self, context: Any) -> core.CodeContext:
        """A fresh kernel: the state is gone, the id stays."""
        from urllib.parse import quote
        cid = quote(core.context_id(context), safe="")
        return core.code_context(self._call("POST", f"/code-contexts/{cid}:restart", json={}, timeout=90))

    def interrupt(self, context: Any) -> None:
        """Interrupts the context's run (KeyboardInterrupt in Python)."""
        from urllib.parse import quote
        self._call("POST", f"/code-contexts/{quote(core.context_id(context), safe='')}:interrupt", json={})

    def delete_context(self, context: Any) -> None:
        from urllib.parse import quote
        self._call("DELETE", f"/code-contexts/{quote(core.context_id(context), safe='')}")
