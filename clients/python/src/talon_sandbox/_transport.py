"""Where the platform is and how calls reach it: `Config` (API key, URL or
URLs, timeouts, HTTP/2), the one client per configuration (and event
loop) it hands out, and the transport under that client, which fails
over between several servers and raises the SDK's own errors when none
can be reached."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Optional

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
