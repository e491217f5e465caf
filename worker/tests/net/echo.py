"""TCP and UDP echo on one port, for the egress tests:
`echo.py PORT [ADDRESS...]` (0.0.0.0 when none). UDP sockets are bound per
address so that a reply leaves from the address that was asked (a
masqueraded flow only matches a reply from there). Prints "ready" once
everything listens."""
import socket
import sys
import threading

port = int(sys.argv[1])
addrs = sys.argv[2:] or ["0.0.0.0"]


def tcp(addr):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    while True:
        c, _ = s.accept()

        def serve(c=c):
            try:
                c.settimeout(5)
                c.sendall(c.recv(100))
            finally:
                c.close()

        threading.Thread(target=serve, daemon=True).start()


def udp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    while True:
        d, peer = s.recvfrom(2048)
        s.sendto(d, peer)


listening = []
for a in addrs:
    for f in (tcp, udp):
        t = threading.Thread(target=f, args=(a,), daemon=True)
        t.start()
        listening.append(t)
print("ready", flush=True)
threading.Event().wait()
