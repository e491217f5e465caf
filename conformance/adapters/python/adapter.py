"""Conformance adapter for the Python SDK: runs each case's steps with
talon_sandbox and writes what it observed. The runner judges."""

import hashlib
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

from talon_sandbox import Sandbox, errors
from talon_sandbox._core import Config

KEYS = {
    None: os.environ["TALON_API_KEY"],
    "viewer": os.environ["TALON_VIEWER_KEY"],
    "alt": os.environ["TALON_ALT_KEY"],
    "invalid": "tln_invalid0_" + "x" * 32,
}


def generate(size, seed):
    return bytes((((i * 2654435761) + seed) & 0xFFFFFFFF) >> 24 for i in range(size))


def finished(run):
    """A command's result, also when it ended non-zero or timed out (the
    SDK raises then, with the result attached)."""
    try:
        return run()
    except (errors.CommandExitError, errors.CommandTimeoutError) as e:
        return e.result


class Case:
    def __init__(self):
        self.slots = {}

    def sandbox(self, a):
        """The sandbox of the step's slot, seen with the step's key (a
        handle only: `connect` would resume a paused one)."""
        s = self.slots[a.get("slot", "a")]
        key = a.get("key")
        if key is None:
            return s
        config = Config(KEYS[key]).resolved()
        return Sandbox(Sandbox.get_info(s.sandbox_id, api_key=KEYS[key]), config.client(), config)

    def step(self, op, a):
        key = KEYS[a.get("key")]
        if op == "create":
            s = Sandbox.create(a.get("image", "host"), envs=a.get("envs"), cpu_millis=250, memory_mib=256,
                               metadata=a.get("metadata"), idempotency_key=a.get("idempotency_key"),
                               isolation=a.get("isolation"), api_key=key)
            same = next((n for n, o in self.slots.items() if o.sandbox_id == s.sandbox_id), "")
            self.slots[a.get("slot", "a")] = s
            info = s.info()
            return {"sandbox_id": s.sandbox_id, "state": info.state, "same_as": same, "isolation": info.isolation}
        if op == "list_filtered":
            ids, token = set(), None
            while True:
                page, token = Sandbox.list(metadata=a.get("metadata"), state=a.get("states"), page_token=token,
                                           api_key=key)
                ids |= {i.sandbox_id for i in page}
                if not token:
                    break
            return {"slots": sorted(n for n, o in self.slots.items() if o.sandbox_id in ids)}
        if op == "connect":
            sid = self.slots[a.get("slot", "a")].sandbox_id
            return {"state": Sandbox.connect(sid, api_key=key).get_info().state}
        if op == "agent_run":
            s = self.sandbox(a)
            run = s.agent.run(a["cmd"], a.get("prompt", ""))
            again = s.agent.connect(run.run_id, after_seq=1)
            return {"kinds": [e.kind for e in run.events], "output": run.output,
                    "file_changes": [f"{e.change} {e.path}" for e in run.file_changes],
                    "exit_code": run.exit_code,
                    "replay_matches": [e.seq for e in again.events] == [e.seq for e in run.events[1:]]}
        if op == "browser":
            s = self.sandbox(a)
            b = s.browser.start(window_size=a.get("window_size"))
            with urllib.request.urlopen(b.cdp_url + "/json/version", timeout=60) as r:
                version = json.loads(r.read())
            png = s.browser.screenshot()
            stopped = s.browser.stop()
            return {"state": b.state, "window_size": b.window_size,
                    "cdp_url_names_sandbox": f"/cdp/{s.sandbox_id}/" in b.cdp_url,
                    "version_ws_matches": version.get("webSocketDebuggerUrl") == b.websocket_debugger_url,
                    "loopback_hidden": "127.0.0.1:9222" not in json.dumps(version),
                    "png": png.startswith(b"\x89PNG\r\n\x1a\n"),
                    "stopped_state": stopped.state, "stopped_cdp_url": stopped.cdp_url}
        if op == "code":
            s = self.sandbox(a)
            ctx = s.code.create_context(a["language"])
            runs = [s.code.run(c, context=ctx) for c in a["runs"]]
            s.code.delete_context(ctx)
            return {"texts": [x.text or "" for x in runs], "stdouts": [x.stdout for x in runs],
                    "errors": [x.error.name if x.error else "" for x in runs]}
        if op == "metrics":
            m = self.sandbox(a).get_metrics()[0]
            return {"cpu_count": m.cpu_count, "mem_total_mib": m.mem_total >> 20,
                    "mem_used_positive": m.mem_used > 0, "disk_used_positive": m.disk_used > 0}
        if op == "file_url":
            s = self.sandbox(a)
            if a["operation"] == "write":
                req = urllib.request.Request(s.upload_url(a["path"]), data=a["text"].encode(), method="POST",
                                             headers={"content-type": "application/octet-stream"})
            else:
                req = urllib.request.Request(s.download_url(a["path"]))
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    body = r.read()
                    status = r.status
            except urllib.error.HTTPError as e:
                body, status = e.read(), e.code
            out = {"status": status}
            if a["operation"] == "read":
                out["text"] = body.decode("utf-8", "replace")
            return out
        if op == "get":
            sid = a.get("sandbox_id") or self.slots[a.get("slot", "a")].sandbox_id
            return {"state": Sandbox.get_info(sid, api_key=key).state}
        if op in ("pause", "resume", "kill"):
            getattr(self.sandbox(a), op)()
            return {}
        if op == "list_all":
            ids, token, pages = [], None, 0
            while True:
                page, token = Sandbox.list(page_size=a["page_size"], page_token=token, api_key=key)
                ids += [s.sandbox_id for s in page]
                pages += 1
                if not token:
                    break
            created = {s.sandbox_id for s in self.slots.values()}
            return {"all_created_listed": created <= set(ids), "unique": len(ids) == len(set(ids)),
                    "pages": pages}
        if op == "run":
            r = finished(lambda: self.sandbox(a).commands.run(a["cmd"], envs=a.get("envs"), cwd=a.get("cwd"),
                                                              timeout=a.get("timeout_s"), stdin=a.get("stdin")))
            return {"stdout": r.stdout, "stderr": r.stderr, "exit_code": r.exit_code, "signal": r.signal,
                    "timed_out": r.timed_out}
        if op == "run_bg":
            h = self.sandbox(a).commands.run(a["cmd"], background=True, tag=a["tag"])
            return {"pid": h.pid}
        if op == "reconnect":
            r = finished(lambda: self.sandbox(a).commands.connect(tag=a["tag"]).wait(timeout=60))
            return {"stdout": r.stdout, "stderr": r.stderr, "exit_code": r.exit_code, "signal": r.signal}
        if op == "signal":
            self.sandbox(a).commands.kill(tag=a["tag"], signal=a["signal"])
            return {}
        if op == "pty":
            out = []
            p = self.sandbox(a).pty.create(cols=a.get("cols", 80), rows=a.get("rows", 24), cmd=a.get("cmd"),
                                           on_data=out.append)
            p.send_stdin(a["input"])
            r = finished(lambda: p.wait(timeout=60))
            return {"output": b"".join(out).decode("utf-8", "replace"), "exit_code": r.exit_code}
        if op == "write":
            data = generate(**a["generate"]) if "generate" in a else a["text"].encode()
            return {"size": self.sandbox(a).files.write(a["path"], data, user=a.get("user")).size}
        if op == "read":
            data = self.sandbox(a).files.read(a["path"], format="bytes", user=a.get("user"))
            r = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            try:
                r["text"] = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            return r
        if op == "list_dir":
            return {"names": sorted(f.name for f in self.sandbox(a).files.list(a["path"]))}
        if op == "stat":
            f = self.sandbox(a).files.stat(a["path"])
            return {"size": f.size, "type": f.type}
        if op == "mkdir":
            self.sandbox(a).files.make_dir(a["path"])
            return {}
        if op == "move":
            self.sandbox(a).files.rename(a["from"], a["to"])
            return {}
        if op == "remove":
            self.sandbox(a).files.remove(a["path"], recursive=a.get("recursive", False))
            return {}
        if op == "exists":
            return {"exists": self.sandbox(a).files.exists(a["path"])}
        if op == "preview_token":
            s = self.sandbox(a)
            r = s.preview_token(a["port"], ttl=a.get("ttl_s"))
            return {"url": r.get("url", ""), "token_present": bool(r.get("token")),
                    "url_names_sandbox": s.sandbox_id in r.get("url", "")}
        if op == "whoami":
            client_sandbox = Sandbox.__new__(Sandbox)
            client_sandbox._client = Config(key).client()
            return {"tenant_id": client_sandbox.whoami().get("tenantId", "")}
        raise ValueError(f"unknown op {op}")

    def cleanup(self):
        for s in self.slots.values():
            try:
                s.kill()
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
            except errors.TalonError as e:
                out.append({"error": e.code, "message": e.message})
            except Exception as e:  # noqa: BLE001 - reported, judged by the runner
                out.append({"error": "ADAPTER", "message": f"{type(e).__name__}: {e}"})
        case.cleanup()
        results[c["name"]] = out
    json.dump(results, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
