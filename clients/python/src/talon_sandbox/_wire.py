"""The REST side of the calls both SDKs make: paths, request bodies and
query parameters built from the SDK's arguments, and answers checked
(a non-2xx raises its typed error) and parsed. Also `either`, which lets
one name be both a sandbox's call and the class's (`sbx.kill()`,
`Sandbox.kill(sandbox_id)`)."""

from __future__ import annotations

import base64
import ipaddress
import json
from typing import Any, Callable, Optional
from urllib.parse import quote

import httpx

from . import errors
from ._models import BrowserInfo, CodeContext, CommandResult, SandboxInfo


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


# Foreground commands are killed after this long unless the caller sets
# `timeout` (0 or None: no limit), like E2B's default.
DEFAULT_COMMAND_TIMEOUT = 60.0


def finish(r: "CommandResult", timeout: Optional[float]) -> "CommandResult":
    """A finished command's result, or the error it stands for: killed at
    its timeout, or ended with a non-zero code or a signal."""
    if r.timed_out:
        raise errors.CommandTimeoutError(r, timeout or 0)
    if r.exit_code != 0 or r.signal:
        raise errors.CommandExitError(r)
    return r


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


def code_context(body: Any) -> CodeContext:
    c = (body or {}).get("context", body) or {}
    lang = str(c.get("language") or "").removeprefix("CODE_LANGUAGE_").lower()
    return CodeContext(c.get("contextId", ""), lang, c.get("cwd", ""), int(c.get("executionCount") or 0))


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
