"""One HTTP client (and connection pool) per configuration: a new client
per create, connect or list paid a new connection every time."""

import asyncio

from talon_sandbox import _core as core


def test_one_client_per_configuration():
    a = core.Config("tln_x", "http://127.0.0.1:1").client()
    b = core.Config("tln_x", "http://127.0.0.1:1/").client()
    assert a is b
    assert core.Config("tln_y", "http://127.0.0.1:1").client() is not a
    assert core.Config("tln_x", "http://127.0.0.1:1", request_timeout=5).client() is not a


def test_one_async_client_per_configuration_and_loop():
    async def two():
        c = core.Config("tln_x", "http://127.0.0.1:1")
        return c.async_client(), c.async_client()

    a1, a2 = asyncio.run(two())
    assert a1 is a2
    # Another event loop has a pool of its own.
    b1, _ = asyncio.run(two())
    assert b1 is not a1
