"""Forgetting one of the variables `talon up` prints never sends a request
off this machine (issue 34): the SDK runs in a mount namespace of its own
whose /etc/hosts points E2B's hosts at a listener here that records every
connection, and the test fails if any arrives.

- Without E2B_SANDBOX_URL (and E2B_DOMAIN): the SDK builds the data
  plane's address from the `domain` create answered, which names this
  machine; before, create answered none and the SDK sent the sandbox's
  access token to `sandbox.e2b.app`.
- Without E2B_API_URL: E2B_DOMAIN (printed by `talon up`) keeps the
  control plane here; the API key goes nowhere else."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

pytest.importorskip("e2b")

pytestmark = pytest.mark.skipif(
    not (os.environ.get("E2B_API_URL") and os.environ.get("E2B_SANDBOX_URL") and os.environ.get("E2B_DOMAIN")),
    reason="needs Talon's E2B API as `talon up` prints it: E2B_API_URL, E2B_SANDBOX_URL, E2B_DOMAIN",
)

# Where E2B's hosts point in the namespace: a loopback address nothing
# else here listens on.
TRAP = "127.0.0.77"
E2B_HOSTS = "api.e2b.app sandbox.e2b.app e2b.app api.e2b.dev sandbox.e2b.dev e2b.dev"

PROBE = textwrap.dedent(
    """
    import json, os, socket, sys, threading
    reached = []

    def trap(port):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((sys.argv[1], port))
        s.listen(16)
        def run():
            while True:
                c, _ = s.accept()
                reached.append(port)
                c.close()
        threading.Thread(target=run, daemon=True).start()

    trap(443)
    trap(80)
    assert socket.gethostbyname("sandbox.e2b.app") == sys.argv[1], "the namespace's hosts file"

    from e2b import Sandbox
    full = dict(os.environ)
    out = {}

    # 1. No E2B_SANDBOX_URL and no E2B_DOMAIN: the API's domain names here.
    for k in ("E2B_SANDBOX_URL", "E2B_DOMAIN"):
        os.environ.pop(k)
    sbx = Sandbox.create(timeout=120)
    out["host"] = sbx.get_host(8000)
    try:
        # The name resolves to this machine (the SDK's client takes
        # `*.localhost` as loopback), whose plain listener never answers
        # its TLS: bounded by the command's timeout.
        sbx.commands.run("true", timeout=5, request_timeout=5)
        out["run"] = "ran"
    except Exception as e:
        out["run"] = type(e).__name__
    os.environ.update(full)
    out["killed"] = Sandbox.kill(sbx.sandbox_id)

    # 2. No E2B_API_URL: E2B_DOMAIN keeps the control plane here.
    os.environ.pop("E2B_API_URL")
    try:
        Sandbox.create(timeout=60, request_timeout=3)
        out["create"] = "created"
    except Exception as e:
        out["create"] = type(e).__name__
    os.environ.update(full)

    out["reached"] = reached
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="a mount namespace needs root")
def test_a_forgotten_variable_never_leaves_the_machine():
    with tempfile.TemporaryDirectory() as d:
        hosts = os.path.join(d, "hosts")
        with open(hosts, "w") as f:
            f.write(f"127.0.0.1 localhost\n{TRAP} {E2B_HOSTS}\n")
        probe = os.path.join(d, "probe.py")
        with open(probe, "w") as f:
            f.write(PROBE)
        r = subprocess.run(
            ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$1" "$2" "$3"',
             hosts, sys.executable, probe, TRAP],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    domain = os.environ["E2B_DOMAIN"]
    assert out["host"].endswith("." + domain), out
    assert out["run"] != "ran", out
    assert out["killed"] is True, out
    assert out["create"] != "created", out
    assert out["reached"] == [], f"a request left for E2B's hosts: {out}"
