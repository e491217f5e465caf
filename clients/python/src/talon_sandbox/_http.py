"""How the synchronous SDK makes its calls: unary ones through the
generated layer (`call`), streams and raw bodies through its httpx client
(`_lines`, `_lines_raw`, `_read_json`). `_body` and `_user` serve the
asyncio SDK too."""

from __future__ import annotations

from typing import Any, Iterator, Optional

import httpx

from . import _core as core
from ._api.client import AuthenticatedClient


def _body(mod: Any, body: Optional[dict]) -> dict:
    """The generated call's body model, from a plain dict."""
    if body is None:
        return {}
    model = mod._get_kwargs.__annotations__.get("body")
    return {"body": model.from_dict(body)}


def call(client: AuthenticatedClient, mod: Any, *args: Any, body: Optional[dict] = None, **kw: Any) -> dict:
    """One unary call through the generated layer; errors raise."""
    kw = {k: v for k, v in kw.items() if v is not None}
    try:
        resp = mod.sync_detailed(*args, client=client, **_body(mod, body), **kw)
    except ValueError as e:  # the generated layer met an answer that is not JSON
        raise core.not_json(e) from e
    return core.parsed(resp)


def _lines(resp: httpx.Response) -> Iterator[core.Event]:
    core.check(resp, None if resp.is_success else _read_json(resp))
    for line in resp.iter_lines():
        if line.strip():
            yield core.event_of(line)


def _read_json(resp: httpx.Response) -> Any:
    resp.read()
    try:
        return resp.json()
    except ValueError:
        return resp.text


def _lines_raw(resp: httpx.Response) -> Iterator[str]:
    core.check(resp, None if resp.is_success else _read_json(resp))
    for line in resp.iter_lines():
        if line.strip():
            yield line


def _user(params: dict, user: Optional[str]) -> dict:
    if user:
        params["user"] = user
    return params
