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
