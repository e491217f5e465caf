#!/usr/bin/env python3
"""The conformance runner: one suite of language-neutral cases
(cases/*.yaml), run by every client through a thin adapter, judged here.

It starts a real `talon up` (unless TALON_URL, TALON_GRPC_URL and
TALON_ADMIN_KEY name a running one), makes two tenants with developer and
viewer API keys, hands each adapter the cases as JSON, reads back what
each step observed, and checks it against the case's expectations. It
prints a table of case × client; every cell must pass.

    conformance/run.py [--clients python,typescript,go,rust,sandboxctl,dotnet] [--cases PATTERN]

Adapters: `ADAPTER CASES.json RESULTS.json`, with TALON_URL (REST),
TALON_GRPC_URL, TALON_API_KEY (developer), TALON_VIEWER_KEY and
TALON_ALT_KEY (a developer of another tenant) in the environment.
See README.md for the step vocabulary.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def generate(size: int, seed: int) -> bytes:
    """The deterministic bytes a `generate` step writes: byte i is the top
    byte of (i * 2654435761 + seed) mod 2^32."""
    out = bytearray(size)
    for i in range(size):
        out[i] = (((i * 2654435761) + seed) & 0xFFFFFFFF) >> 24
    return bytes(out)


def rest(method: str, url: str, key: str | None, body: dict | None = None) -> dict:
    req = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None)
    req.add_header("content-type", "application/json")
    if key:
        req.add_header("authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"{}")


class Platform:
    """A live `talon up`, started here unless one is named."""

    def __init__(self) -> None:
        self.proc = None
        self.dir = None
        if os.environ.get("TALON_URL") and os.environ.get("TALON_ADMIN_KEY"):
            self.url = os.environ["TALON_URL"]
            self.grpc = os.environ.get("TALON_GRPC_URL", "http://127.0.0.1:7070")
            self.admin = os.environ["TALON_ADMIN_KEY"]
            return
        talon = ROOT / "target/debug/talon"
        agent = subprocess.run([str(ROOT / "scripts/build-agent.sh")], check=True, capture_output=True,
                               text=True).stdout.strip()
        self.dir = tempfile.mkdtemp(prefix="talon-conformance-")
        os.chmod(self.dir, 0o711)
        g, o, h = free_port(), free_port(), free_port()
        self.url, self.grpc = f"http://127.0.0.1:{h}", f"http://127.0.0.1:{g}"
        log = open(Path(self.dir) / "up.log", "w")
        self.proc = subprocess.Popen(
            [str(talon), "up", "--data-dir", self.dir, "--grpc-listen", f"127.0.0.1:{g}",
             "--ops-listen", f"127.0.0.1:{o}", "--http-listen", f"127.0.0.1:{h}", "--agent-path", agent,
             "--network", "none", "--e2b-api-listen", "off"],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "TALON_LOG": "warn"})
        creds = Path(self.dir) / "bootstrap-credentials.json"
        for _ in range(600):
            if creds.exists():
                try:
                    self.admin = json.loads(creds.read_text())["api_key"]
                    rest("GET", f"{self.url}/v1/admin/workers", self.admin)
                    break
                except Exception:
                    pass
            time.sleep(0.1)
        else:
            raise SystemExit("talon up did not start; see " + str(Path(self.dir) / "up.log"))
        for _ in range(200):
            ws = rest("GET", f"{self.url}/v1/admin/workers", self.admin).get("workers", [])
            if any(w.get("runtimes") for w in ws):
                break
            time.sleep(0.1)

    def tenant(self, name: str) -> dict[str, str]:
        """A tenant with a developer and a viewer API key."""
        pw = "conformance-password-1"
        email = f"owner@{name}.test"
        rest("POST", f"{self.url}/v1/tenants", self.admin,
             {"name": name, "ownerEmail": email, "ownerPassword": pw})
        tok = rest("POST", f"{self.url}/v1/auth/login", None, {"email": email, "password": pw})
        owner = tok["tokens"]["accessToken"]
        keys = {}
        for role in ("ROLE_DEVELOPER", "ROLE_VIEWER"):
            r = rest("POST", f"{self.url}/v1/tenants/-/api-keys", owner, {"name": role.lower(), "role": role})
            keys[role] = r["secret"]
        return {"developer": keys["ROLE_DEVELOPER"], "viewer": keys["ROLE_VIEWER"]}

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if self.dir and not os.environ.get("CONFORMANCE_KEEP"):
            remove_sandboxes(Path(self.dir))
            shutil.rmtree(self.dir, ignore_errors=True)


def remove_sandboxes(data: Path) -> None:
    """Sandboxes outlive their worker by design: the platform's own (the
    pool's too) are deleted with its data directory, containers through
    `talon oci`, gVisor's through runsc, and their mounts unmounted."""
    talon = str(ROOT / "target/debug/talon")
    state = data / "worker/runtime-state"
    if state.is_dir():
        for c in state.iterdir():
            subprocess.run([talon, "oci", "--root", str(state), "delete", "--force", c.name],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runsc = shutil.which("runsc") or "/usr/local/lib/talon-gvisor/runsc"
    rstate = data / "worker/runsc-state"
    if rstate.is_dir() and os.path.exists(runsc):
        ids = subprocess.run([runsc, "--root", str(rstate), "list", "--quiet"],
                             capture_output=True, text=True).stdout.split()
        for i in ids:
            subprocess.run([runsc, "--root", str(rstate), "delete", "--force", i],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mounts = [l.split()[4] for l in open("/proc/self/mountinfo") if l.split()[4].startswith(str(data))]
    for m in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", m], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


ADAPTERS = {
    "python": lambda: [str(ROOT / ".venv/bin/python"), str(HERE / "adapters/python/adapter.py")],
    "typescript": lambda: ["node", str(HERE / "adapters/typescript/adapter.mjs")],
    "go": lambda: [str(HERE / "adapters/go/adapter")],
    "rust": lambda: [str(ROOT / "target/debug/talon-conformance")],
    "sandboxctl": lambda: [str(ROOT / ".venv/bin/python"), str(HERE / "adapters/sandboxctl/adapter.py")],
    "dotnet": lambda: ["mono", "--debug", str(HERE / "adapters/dotnet/bin/adapter.exe")],
}


def build(clients: list[str]) -> None:
    """Builds what the adapters run."""
    if "go" in clients:
        subprocess.run(["go", "build", "-o", "adapter", "."], cwd=HERE / "adapters/go", check=True)
    if "rust" in clients or "sandboxctl" in clients:
        subprocess.run(["cargo", "build", "--quiet", "-p", "talon-conformance", "-p", "talon-sdk"], cwd=ROOT,
                       check=True)
    if "typescript" in clients:
        ts = ROOT / "clients/typescript"
        if not (ts / "node_modules").exists():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=ts, check=True)
        subprocess.run(["npx", "tsc", "-p", "."], cwd=ts, check=True)
    if "dotnet" in clients:
        subprocess.run(["bash", str(HERE / "adapters/dotnet/build.sh")], check=True)
    if "python" in clients or "sandboxctl" in clients:
        subprocess.run([str(ROOT / ".venv/bin/pip"), "install", "--quiet", "--disable-pip-version-check", "-e",
                        str(ROOT / "clients/python")], check=True)


# -- judging ---------------------------------------------------------------

def matches(want, got) -> str | None:
    """None when `got` satisfies `want`, else why not."""
    if isinstance(want, dict) and want and all(k.startswith("$") for k in want):
        for k, v in want.items():
            op = k[1:]
            if op == "contains" and not (isinstance(got, (str, list)) and v in got):
                return f"{short(got)} does not contain {v!r}"
            if op == "not_contains" and isinstance(got, (str, list)) and v in got:
                return f"{short(got)} contains {v!r}"
            if op == "regex" and not (isinstance(got, str) and re.search(v, got)):
                return f"{short(got)} does not match /{v}/"
            if op == "startswith" and not (isinstance(got, str) and got.startswith(v)):
                return f"{short(got)} does not start with {v!r}"
            if op == "endswith" and not (isinstance(got, str) and got.endswith(v)):
                return f"{short(got)} does not end with {v!r}"
            if op == "lines" and not (isinstance(got, str) and len(got.splitlines()) == v):
                return f"{len(str(got).splitlines())} lines, not {v}"
            if op == "len" and not (hasattr(got, "__len__") and len(got) == v):
                return f"length {len(got) if hasattr(got, '__len__') else '?'}, not {v}"
            if op == "gte" and not (isinstance(got, (int, float)) and got >= v):
                return f"{got!r} < {v}"
            if op == "sha256_of" and got != hashlib.sha256(generate(v["size"], v["seed"])).hexdigest():
                return f"sha256 {got} is not that of the generated {v['size']} bytes"
            if op == "one_of" and got not in v:
                return f"{got!r} is none of {v}"
        return None
    if want != got:
        return f"{short(got)} != {short(want)}"
    return None


def short(v) -> str:
    s = repr(v)
    return s if len(s) < 80 else s[:77] + "..."


def judge(case: dict, results: list | None) -> str | None:
    """None when every step of the case observed what it expects."""
    if results is None:
        return "the adapter reported nothing for this case"
    for i, step in enumerate(case["steps"]):
        if i >= len(results):
            return f"step {i + 1} ({step['op']}) did not run"
        got = results[i] or {}
        want = step.get("expect", {})
        if "error" in got and "error" not in want:
            return f"step {i + 1} ({step['op']}) failed: {got['error']} {got.get('message', '')}"[:200]
        for k, w in want.items():
            if k not in got:
                return f"step {i + 1} ({step['op']}): no {k!r} in {short(got)}"
            why = matches(w, got[k])
            if why:
                return f"step {i + 1} ({step['op']}) {k}: {why}"
    return None


def load_cases(pattern: str) -> list[dict]:
    cases = []
    for f in sorted((HERE / "cases").glob("*.yaml")):
        for c in yaml.safe_load(f.read_text())["cases"]:
            if fnmatch.fnmatch(c["name"], pattern):
                cases.append(c)
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"duplicate case names: {dup}")
    return cases


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", default=",".join(ADAPTERS))
    ap.add_argument("--cases", default="*")
    args = ap.parse_args()
    clients = [c for c in args.clients.split(",") if c]
    cases = load_cases(args.cases)
    build(clients)
    platform = Platform()
    try:
        main_t = platform.tenant(f"conformance-{os.getpid()}")
        alt_t = platform.tenant(f"conformance-alt-{os.getpid()}")
        env = {**os.environ, "TALON_URL": platform.url, "TALON_GRPC_URL": platform.grpc,
               "TALON_API_KEY": main_t["developer"], "TALON_VIEWER_KEY": main_t["viewer"],
               "TALON_ALT_KEY": alt_t["developer"], "XDG_CONFIG_HOME": tempfile.mkdtemp(prefix="talon-cfg-")}
        work = Path(tempfile.mkdtemp(prefix="talon-conformance-io-"))
        table: dict[str, dict[str, str | None]] = {}
        for client in clients:
            out = work / f"{client}.json"
            # `{nonce}` in a case is one value per client run, so one
            # client's sandboxes (metadata, idempotency keys) are never
            # another's.
            nonce = f"{client}-{secrets.token_hex(4)}"
            mine = work / f"{client}-cases.json"
            mine.write_text(json.dumps(cases).replace("{nonce}", nonce))
            started = time.time()
            p = subprocess.run(ADAPTERS[client]() + [str(mine), str(out)], env=env,
                               capture_output=True, text=True, timeout=1200)
            took = time.time() - started
            results = json.loads(out.read_text()) if out.exists() else {}
            if p.returncode != 0 or not results:
                sys.stderr.write(f"--- {client} adapter exited {p.returncode} after {took:.0f} s\n{p.stderr[-3000:]}\n")
            for c in cases:
                table.setdefault(c["name"], {})[client] = judge(c, results.get(c["name"]))
            print(f"{client}: {took:.1f} s", file=sys.stderr)
    finally:
        platform.stop()
    width = max(len(n) for n in table)
    print(f"{'case':<{width}}  " + "  ".join(f"{c:<10}" for c in clients))
    failures = []
    for name, row in table.items():
        cells = []
        for c in clients:
            why = row.get(c)
            cells.append(f"{'pass' if why is None else 'FAIL':<10}")
            if why is not None:
                failures.append(f"{name} [{c}]: {why}")
        print(f"{name:<{width}}  " + "  ".join(cells))
    total = len(table) * len(clients)
    print(f"\n{total - len(failures)}/{total} cells pass ({len(table)} cases × {len(clients)} clients)")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
