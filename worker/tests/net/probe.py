"""Probes destinations from inside a sandbox: `probe.py PORT TARGETS_JSON`
where TARGETS_JSON maps a label to [name_or_ip, fallback_ip]. For each it
tries TCP and UDP echo on PORT and an ICMP echo, and prints JSON:
{label: {"tcp": bool, "udp": bool, "icmp": bool, "resolved": ip|null}},
and under "resolver" whether the sandbox's name server answers a query at
all (any answer, REFUSED included) over TCP and UDP."""
import json
import socket
import struct
import sys
import threading

port = int(sys.argv[1])
targets = json.loads(sys.argv[2])
TIMEOUT = 1.5
out = {}


def resolve(name):
    try:
        return socket.gethostbyname(name)
    except OSError:
        return None


def tcp(ip):
    with socket.create_connection((ip, port), timeout=TIMEOUT) as s:
        s.sendall(b"talon")
        return s.recv(100) == b"talon"


def udp(ip):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        s.connect((ip, port))
        s.send(b"talon")
        return s.recv(100) == b"talon"


def icmp(ip):
    # An unprivileged ping socket (net.ipv4.ping_group_range).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP) as s:
        s.settimeout(TIMEOUT)
        s.sendto(struct.pack("!BBHHH", 8, 0, 0, 0, 1) + b"talon", (ip, 0))
        data, _ = s.recvfrom(1500)
        return data[0] == 0 and data.endswith(b"talon")


def attempt(f, ip):
    try:
        return bool(f(ip))
    except OSError:
        return False


def probe(label, name, fallback):
    resolved = resolve(name) if not name[0].isdigit() else name
    ip = resolved or fallback
    r = {"resolved": resolved}
    threads = []
    for f in (tcp, udp, icmp):
        def run(f=f):
            r[f.__name__] = attempt(f, ip)
        t = threading.Thread(target=run)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    out[label] = r


def nameserver():
    for line in open("/etc/resolv.conf"):
        if line.startswith("nameserver"):
            return line.split()[1]


# A query for "example.test" A; any reply counts.
QUERY = struct.pack("!HHHHHH", 0x7a1b, 0x0100, 1, 0, 0, 0) + b"\x07example\x04test\x00" + struct.pack("!HH", 1, 1)


def dns_udp(ip):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        s.sendto(QUERY, (ip, 53))
        return s.recv(512)[:2] == QUERY[:2]


def dns_tcp(ip):
    with socket.create_connection((ip, 53), timeout=TIMEOUT) as s:
        s.sendall(struct.pack("!H", len(QUERY)) + QUERY)
        got = b""
        while len(got) < 4:
            chunk = s.recv(512)
            if not chunk:
                break
            got += chunk
        return got[2:4] == QUERY[:2]


def resolver():
    ns = nameserver()
    out["resolver"] = {"tcp": attempt(dns_tcp, ns), "udp": attempt(dns_udp, ns), "icmp": False, "resolved": None}


threads = [threading.Thread(target=probe, args=(k, v[0], v[1])) for k, v in targets.items()]
threads.append(threading.Thread(target=resolver))
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(out, sort_keys=True))
