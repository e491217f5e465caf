"""Conformance adapter for sandboxctl: each step is one or a few
invocations of the CLI with `--output json`, as a script would use it.
The runner judges."""

import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BIN = str(ROOT / "target/debug/sandboxctl")
KEYS = {
    None: os.environ["TALON_API_KEY"],
    "viewer": os.environ["TALON_VIEWER_KEY"],
    "alt": os.environ["TALON_ALT_KEY"],
    "invalid": "tln_invalid0_" + "x" * 32,
}


class Failed(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def generate(size, seed):
    return bytes((((i * 2654435761) + seed) & 0xFFFFFFFF) >> 24 for i in range(size))


def failure(p):
    """The Failed a sandboxctl that exited non-zero reports on stderr."""
    err = {}
    for line in p.stderr.decode(errors="replace").splitlines():
        try:
            err = json.loads(line).get("error", {})
        except ValueError:
            pass
    return Failed(err.get("code", "ADAPTER"), err.get("message", p.stderr.decode(errors="replace")[-300:]))


def ctl(args, key=None, stdin=b"", raw=False):
    """Runs sandboxctl; its stdout (JSON unless raw), or Failed."""
    env = {**os.environ, "TALON_API_KEY": KEYS[key]}
    p = subprocess.run([BIN, "--output", "json", *args], input=stdin, capture_output=True, env=env, timeout=300)
    if p.returncode != 0 and not raw:
        raise failure(p)
    if raw:
        return p
    return json.loads(p.stdout or b"{}")


def events(p):
    """The NDJSON events of `exec`/`logs -f`: stdout, stderr, exit."""
    out, err, exited = bytearray(), bytearray(), None
    for line in p.stdout.decode().splitlines():
        if not line.strip():
            continue
        e = json.loads(line)
        if "exited" in e:
            exited = e["exited"]
        elif e.get("stream") == "stderr":
            err += base64.b64decode(e["data_b64"])
        else:
            out += base64.b64decode(e["data_b64"])
    if exited is None:
        msg = {}
        for line in p.stderr.decode(errors="replace").splitlines():
            try:
                msg = json.loads(line).get("error", {})
            except ValueError:
                pass
        raise Failed(msg.get("code", "ADAPTER"), msg.get("message", p.stderr.decode(errors="replace")[-300:]))
    return {"stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "exit_code": exited["exit_code"], "signal": exited["signal"], "timed_out": exited["timed_out"]}


def argv(cmd):
    return ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)


class Case:
    def __init__(self):
        self.slots = {}

    def sid(self, a):
        return a.get("sandbox_id") or self.slots[a.get("slot", "a")]

    def step(self, op, a):
        k = a.get("key")
        if op == "create":
            args = ["create", "--image", a.get("image", "host"), "--cpu-millis", "250", "--memory-mib", "256"]
            for n, v in (a.get("envs") or {}).items():
                args += ["--env", f"{n}={v}"]
            for n, v in (a.get("metadata") or {}).items():
                args += ["--metadata", f"{n}={v}"]
            if a.get("idempotency_key"):
                args += ["--idempotency-key", a["idempotency_key"]]
            if a.get("isolation"):
                args += ["--isolation", a["isolation"]]
            s = ctl(args, k)
            same = next((n for n, o in self.slots.items() if o == s["sandbox_id"]), "")
            self.slots[a.get("slot", "a")] = s["sandbox_id"]
            return {"sandbox_id": s["sandbox_id"], "state": s["state"], "same_as": same,
                    "isolation": s["isolation"]}
        if op == "list_filtered":
            args = ["list"]
            for n, v in (a.get("metadata") or {}).items():
                args += ["--metadata", f"{n}={v}"]
            for st in a.get("states") or []:
                args += ["--state", st]
            ids, token = set(), ""
            while True:
                r = ctl(args + ["--page-token", token], k)
                ids |= {s["sandbox_id"] for s in r["sandboxes"]}
                token = r["next_page_token"]
                if not token:
                    break
            return {"slots": sorted(n for n, o in self.slots.items() if o in ids)}
        if op == "connect":
            return {"state": ctl(["connect", self.sid(a)], k)["state"]}
        if op == "agent_run":
            sid = self.sid(a)
            p = ctl(["agent", "run", sid, "--prompt", a.get("prompt", ""), "--", *a["cmd"]], k, raw=True)
            evs = [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]
            if not evs:
                raise Failed("ADAPTER", p.stderr.decode(errors="replace")[-300:])
            run_id = evs[0]["started"]["run_id"]
            q = ctl(["agent", "connect", sid, run_id, "--after", "1"], k, raw=True)
            again = [json.loads(line) for line in q.stdout.decode().splitlines() if line.strip()]
            kind = lambda e: next(x for x in ("started", "output", "file_change", "completed") if x in e)
            return {"kinds": [kind(e) for e in evs],
                    "output": "".join(e["output"]["text"] + "\n" for e in evs if "output" in e),
                    "file_changes": [f'{e["file_change"]["kind"]} {e["file_change"]["path"]}'
                                     for e in evs if "file_change" in e],
                    "exit_code": evs[-1]["completed"]["exit_code"],
                    "replay_matches": [e["seq"] for e in again] == [e["seq"] for e in evs[1:]]}
        if op == "browser":
            sid = self.sid(a)
            b = ctl(["browser", "start", sid] + (["--window-size", a["window_size"]] if a.get("window_size") else []), k)
            with urllib.request.urlopen(b["cdp_url"] + "/json/version", timeout=60) as r:
                version = json.loads(r.read())
            png = ctl(["browser", "screenshot", sid, "-O", "-"], k, raw=True).stdout
            stopped = ctl(["browser", "stop", sid], k)
            return {"state": b["state"], "window_size": b["window_size"],
                    "cdp_url_names_sandbox": f"/cdp/{sid}/" in b["cdp_url"],
                    "version_ws_matches": version.get("webSocketDebuggerUrl") == b["websocket_debugger_url"],
                    "loopback_hidden": "127.0.0.1:9222" not in json.dumps(version),
                    "png": png.startswith(b"\x89PNG\r\n\x1a\n"),
                    "stopped_state": stopped["state"], "stopped_cdp_url": stopped["cdp_url"]}
        if op == "code":
            sid = self.sid(a)
            cid = ctl(["code", "create", sid, "--language", a["language"]], k)["context_id"]
            runs = []
            for code in a["runs"]:
                # `code run` exits 1 when the code raised: its JSON still says what.
                p = ctl(["code", "run", sid, code, "--context", cid], k, raw=True)
                if p.returncode not in (0, 1) or not p.stdout.strip():
                    raise failure(p)
                runs.append(json.loads(p.stdout))
            ctl(["code", "rm", sid, cid], k, raw=True)
            main = [next((r["data"].get("text/plain", "") for r in x["results"] if r["is_main_result"]), "")
                    for x in runs]
            return {"texts": main, "stdouts": [x["stdout"] for x in runs],
                    "errors": [(x["error"] or {}).get("name", "") for x in runs]}
        if op == "metrics":
            m = ctl(["metrics", self.sid(a)], k)
            return {"cpu_count": m["cpu_count"], "mem_total_mib": int(m["mem_total_bytes"]) >> 20,
                    "mem_used_positive": int(m["mem_used_bytes"]) > 0,
                    "disk_used_positive": int(m["disk_used_bytes"]) > 0}
        if op == "file_url":
            write = a["operation"] == "write"
            url = ctl(["fs", "url", self.sid(a), a["path"]] + (["--write"] if write else []), k)["url"]
            req = urllib.request.Request(url, data=a["text"].encode() if write else None,
                                         method="POST" if write else "GET",
                                         headers={"content-type": "application/octet-stream"} if write else {})
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    body, status = r.read(), r.status
            except urllib.error.HTTPError as e:
                body, status = e.read(), e.code
            return {"status": status, "text": body.decode("utf-8", "replace")} if not write else {"status": status}
        if op == "get":
            return {"state": ctl(["get", self.sid(a)], k)["state"]}
        if op in ("pause", "resume"):
            ctl([op, self.sid(a)], k)
            return {}
        if op == "kill":
            ctl(["rm", self.sid(a)], k)
            return {}
        if op == "list_all":
            ids, token, pages = [], "", 0
            while True:
                r = ctl(["list", "--page-size", str(a["page_size"]), "--page-token", token], k)
                ids += [s["sandbox_id"] for s in r["sandboxes"]]
                pages += 1
                token = r["next_page_token"]
                if not token:
                    break
            return {"all_created_listed": set(self.slots.values()) <= set(ids), "unique": len(ids) == len(set(ids)),
                    "pages": pages}
        if op == "run":
            args = ["exec"]
            for n, v in (a.get("envs") or {}).items():
                args += ["--env", f"{n}={v}"]
            if a.get("cwd"):
                args += ["--cwd", a["cwd"]]
            if a.get("timeout_s"):
                args += ["--timeout", str(int(a["timeout_s"]))]
            stdin = b""
            if "stdin" in a:
                args.append("-i")
                stdin = a["stdin"].encode()
            return events(ctl(args + [self.sid(a), "--", *argv(a["cmd"])], k, stdin=stdin, raw=True))
        if op == "run_bg":
            r = ctl(["exec", "--detach", "--tag", a["tag"], self.sid(a), "--", *argv(a["cmd"])], k)
            return {"pid": r["pid"]}
        if op == "reconnect":
            r = events(ctl(["logs", self.sid(a), "--tag", a["tag"], "-f"], k, raw=True))
            return {x: r[x] for x in ("stdout", "stderr", "exit_code", "signal")}
        if op == "signal":
            ctl(["signal", self.sid(a), "--tag", a["tag"], "--signal", str(a["signal"])], k)
            return {}
        if op == "pty":
            # Not a terminal here: sandboxctl leaves raw mode alone and
            # passes the piped input through.
            cmd = ["--", *a["cmd"]] if a.get("cmd") else []
            size = ["--cols", str(a.get("cols", 80)), "--rows", str(a.get("rows", 24))]
            p = subprocess.run([BIN, "pty", *size, self.sid(a), *cmd], input=a["input"].encode(), capture_output=True,
                               timeout=120, env={**os.environ, "TALON_API_KEY": KEYS[k]})
            return {"output": p.stdout.decode("utf-8", "replace"), "exit_code": p.returncode}
        if op == "write":
            data = generate(**a["generate"]) if "generate" in a else a["text"].encode()
            with tempfile.NamedTemporaryFile() as f:
                f.write(data)
                f.flush()
                user = ["--user", a["user"]] if a.get("user") else []
                return {"size": ctl(["cp", *user, f.name, f"{self.sid(a)}:{a['path']}"], k)["size"]}
        if op == "read":
            user = ["--user", a["user"]] if a.get("user") else []
            p = ctl(["cp", *user, f"{self.sid(a)}:{a['path']}", "-"], k, raw=True)
            if p.returncode != 0:
                ctl(["cp", *user, f"{self.sid(a)}:{a['path']}", "-"], k)  # raises the error
            data = p.stdout
            r = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            try:
                r["text"] = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            return r
        if op == "list_dir":
            return {"names": sorted(e["name"] for e in ctl(["fs", "ls", self.sid(a), a["path"]], k)["entries"])}
        if op == "stat":
            r = ctl(["fs", "stat", self.sid(a), a["path"]], k)
            return {"size": r["size"], "type": r["type"]}
        if op == "mkdir":
            ctl(["fs", "mkdir", self.sid(a), a["path"]], k)
            return {}
        if op == "move":
            ctl(["fs", "mv", self.sid(a), a["from"], a["to"]], k)
            return {}
        if op == "remove":
            ctl(["fs", "rm", self.sid(a), a["path"]] + (["-r"] if a.get("recursive") else []), k)
            return {}
        if op == "exists":
            try:
                ctl(["fs", "stat", self.sid(a), a["path"]], k)
                return {"exists": True}
            except Failed as e:
                if e.code == "NOT_FOUND":
                    return {"exists": False}
                raise
        if op == "preview_token":
            args = ["preview", self.sid(a), str(a["port"])]
            if a.get("ttl_s"):
                args += ["--ttl", str(int(a["ttl_s"]))]
            r = ctl(args, k)
            return {"url": r["url"], "token_present": bool(r["token"]), "url_names_sandbox": self.sid(a) in r["url"]}
        if op == "whoami":
            return {"tenant_id": ctl(["whoami"], k)["tenant_id"]}
        raise ValueError(f"unknown op {op}")

    def cleanup(self):
        for sid in self.slots.values():
            try:
                ctl(["rm", sid])
            except Exception:
                pass


def main():
    cases = json.load(open(sys.argv[1]))
    results = {}
    for c in cases:
        case, out = Case(), []
        for st in c["steps"]:
            try:
                out.append(case.step(st["op"], st.get("args", {})))
            except Failed as e:
                out.append({"error": e.code, "message": e.message})
            except Exception as e:  # noqa: BLE001 - reported, judged by the runner
                out.append({"error": "ADAPTER", "message": f"{type(e).__name__}: {e}"})
        case.cleanup()
        results[c["name"]] = out
    json.dump(results, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
