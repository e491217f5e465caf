"""How the asyncio SDK makes its calls: `call` (unary, through the
generated layer) and `_lines` (a process's stream), awaited."""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional

import httpx

from . import _core as core
from ._api.client import AuthenticatedClient
from ._http import _body


async def call(client: AuthenticatedClient, mod: Any, *args: Any, body: Optional[dict] = None, **kw: Any) -> dict:
    kw = {k: v for k, v in kw.items() if v is not None}
    try:
        resp = await mod.asyncio_detailed(*args, client=client, **_body(mod, body), **kw)
    except ValueError as e:  # the generated layer met an answer that is not JSON
        raise core.not_json(e) from e
    return core.parsed(resp)


async def _lines(resp: httpx.Response) -> AsyncIterator[core.Event]:
    if not resp.is_success:
        await resp.aread()
        core.check(resp)
    async for line in resp.aiter_lines():
        if line.strip():
            yield core.event_of(line)
