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


def test_connection_errors_are_the_sdks_own():
    """Nothing listens there: UnavailableError, a TalonError, not httpx's."""
    import socket

    import pytest

    from talon_sandbox import Sandbox, errors

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(errors.UnavailableError) as e:
        Sandbox.connect("sbx_x", api_key="tln_x", base_url=f"http://127.0.0.1:{port}")
    assert f"127.0.0.1:{port}" in str(e.value)


def test_a_non_json_answer_is_an_error():
    """A 200 that is not JSON (a proxy's page) raises, not an empty dict."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    import pytest

    from talon_sandbox import Sandbox, errors

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html>proxy login</html>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        with pytest.raises(errors.TalonError) as e:
            Sandbox.connect("sbx_x", api_key="tln_x", base_url=f"http://127.0.0.1:{srv.server_port}")
        assert "not a JSON object" in str(e.value)
    finally:
        srv.shutdown()


def test_http2_is_opt_in_over_plain_http(monkeypatch):
    """HTTP/2 by prior knowledge only when asked (TALON_HTTP2=1): a proxy
    in front of the gateway may speak HTTP/1.1 only."""
    assert core.Config("tln_x", "http://127.0.0.1:1").resolved()._versions() == {}
    assert core.Config("tln_x", "http://127.0.0.1:1", http2=True).resolved()._versions() == {
        "http1": False, "http2": True}
    assert core.Config("tln_x", "https://gw.example", http2=None).resolved()._versions() == {"http2": True}
    assert core.Config("tln_x", "https://gw.example", http2=False).resolved()._versions() == {}
    monkeypatch.setenv("TALON_HTTP2", "maybe")
    import pytest

    from talon_sandbox import errors

    with pytest.raises(errors.InvalidArgumentError):
        core.Config("tln_x", "http://127.0.0.1:1").resolved()


def test_http2_against_the_gateway(monkeypatch):
    """The gateway serves h2c: unary calls, process streams and raw files
    all work over one HTTP/2 connection."""
    import os

    import pytest

    if not os.environ.get("TALON_API_KEY"):
        pytest.skip("needs a live server: TALON_URL and TALON_API_KEY")
    from talon_sandbox import Sandbox

    monkeypatch.setenv("TALON_HTTP2", "1")
    http = core.Config().client().get_httpx_client()
    assert http.get("/v1/auth/me").http_version == "HTTP/2"
    with Sandbox.create(memory_mib=128) as s:
        assert s.commands.run("echo over h2").stdout == "over h2\n"
        s.files.write("h2.bin", bytes(range(256)) * 1000)
        assert s.files.read("h2.bin", format="bytes") == bytes(range(256)) * 1000
        assert s._client.get_httpx_client() is http
