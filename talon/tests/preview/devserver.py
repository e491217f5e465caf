"""A dev server for the preview tests, run inside a sandbox:
`devserver.py PORT`. GET /ws is a WebSocket echo (text frames); GET
/stream sends three chunks 0.2 s apart; anything else answers JSON with
the path, query and headers it received."""
import base64
import hashlib
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAGIC = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path == "/ws":
            return self.websocket()
        if path == "/stream":
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i in range(3):
                data = f"chunk{i}\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                time.sleep(0.2)
            self.wfile.write(b"0\r\n\r\n")
            return
        body = json.dumps({
            "path": path,
            "query": query,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def websocket(self):
        key = self.headers["sec-websocket-key"]
        accept = base64.b64encode(hashlib.sha1((key + MAGIC).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("upgrade", "websocket")
        self.send_header("connection", "Upgrade")
        self.send_header("sec-websocket-accept", accept)
        self.end_headers()
        self.wfile.flush()
        s = self.connection
        while True:
            head = s.recv(2, socket.MSG_WAITALL)
            if len(head) < 2:
                return
            op, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack("!H", s.recv(2, socket.MSG_WAITALL))[0]
            mask = s.recv(4, socket.MSG_WAITALL)
            data = bytearray(s.recv(n, socket.MSG_WAITALL)) if n else bytearray()
            for i in range(len(data)):
                data[i] ^= mask[i % 4]
            if op == 8:
                s.sendall(b"\x88\x00")
                return
            reply = b"echo:" + bytes(data)
            s.sendall(bytes([0x81, len(reply)]) + reply)


ThreadingHTTPServer.allow_reuse_address = True
srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("ready", flush=True)
srv.serve_forever()
