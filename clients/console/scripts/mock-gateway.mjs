// A stand-in for the gateway, for looking at the console without a
// platform: it serves dist/ at /console/ (index.html for unknown paths
// below it) and answers the few routes this slice uses with made-up
// data: a browser session (any password; an email starting with "viewer"
// is a viewer), who am I, 1,000 sandboxes (paged, filtered), their event
// stream (a state flips every 2 s), the lifecycle actions, a command's
// NDJSON output, and a PTY WebSocket that evaluates `echo $((a*b))`.
// It checks the CSRF token like the gateway. Not a test of the gateway.
//
//   node scripts/mock-gateway.mjs [port]      (after ./build.sh)
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";

const port = Number(process.argv[2] ?? 8099);
const dist = new URL("../dist/", import.meta.url).pathname;
const COOKIE = "__Host-talon-session";
const sessions = new Map(); // session -> { csrf, email }
const STATES = ["SANDBOX_STATE_RUNNING", "SANDBOX_STATE_PAUSED", "SANDBOX_STATE_STOPPED", "SANDBOX_STATE_FAILED"];
const t0 = Date.UTC(2025, 5, 1);
const sandboxes = Array.from({ length: 1000 }, (_, i) => ({
  sandboxId: `sbx_${String(1000 - i).padStart(26, "0")}`,
  tenantId: "ten_demo",
  image: i % 3 ? "host" : "python-3.12",
  state: i % 17 === 0 ? STATES[2] : i % 29 === 0 ? STATES[3] : i % 5 === 0 ? STATES[1] : STATES[0],
  stateMessage: i % 29 === 0 ? "its init exited with status 1" : "",
  resources: { cpuMillis: "1000", memoryMib: "512", diskMib: "1024", maxPids: "512" },
  metadata: { run: `r${i % 10}`, user: `user-${i % 7}` },
  labels: { team: i % 2 ? "ml" : "web" },
  createTime: new Date(t0 + (1000 - i) * 60_000).toISOString(),
  updateTime: new Date(t0 + (1000 - i) * 60_000).toISOString(),
  generation: "1",
  timeout: "3600s",
  timeoutAction: "TIMEOUT_ACTION_PAUSE",
  isolation: "ISOLATION_CONTAINER",
  workerId: "wrk_local",
  ownerId: "usr_demo",
}));
const byId = new Map(sandboxes.map((s) => [s.sandboxId, s]));
const watchers = new Set();

function send(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
const fail = (res, status, code, message) => send(res, status, { code, message, details: [] });
const cookieOf = (req) =>
  (req.headers.cookie ?? "")
    .split(";")
    .map((c) => c.trim().split("="))
    .find(([k]) => k === COOKIE)?.[1];

function changed(s, state) {
  s.state = state;
  s.updateTime = new Date().toISOString();
  const line = `${JSON.stringify({ kind: "SANDBOX_EVENT_KIND_STATE_CHANGED", eventTime: s.updateTime, sandbox: s, message: "" })}\n`;
  for (const w of watchers) if (!w.id || w.id === s.sandboxId) w.res.write(line);
}
setInterval(() => {
  const s = sandboxes[Math.floor(Math.random() * 20)];
  if (s.state === STATES[0] || s.state === STATES[1]) changed(s, s.state === STATES[0] ? STATES[1] : STATES[0]);
}, 2000).unref();

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const t = Buffer.concat(chunks).toString();
  return t ? JSON.parse(t) : {};
}

function serveStatic(req, res, path) {
  const rel = normalize(path.replace(/^\/console\/?/, "")).replace(/^(\.\.[/\\])+/, "");
  let file = join(dist, rel);
  if (!rel || !existsSync(file) || statSync(file).isDirectory()) file = join(dist, "index.html");
  const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml" };
  res.writeHead(200, {
    "content-type": `${types[extname(file)] ?? "application/octet-stream"}; charset=utf-8`,
    "content-security-policy":
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
  });
  res.end(readFileSync(file));
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, `http://${req.headers.host}`);
  const path = url.pathname;
  if (path === "/console") return res.writeHead(308, { location: "/console/" }).end();
  if (path.startsWith("/console/")) return serveStatic(req, res, path);
  if (!path.startsWith("/v1/")) return fail(res, 404, 5, `no route for ${path}`);

  if (path === "/v1/auth/browser-session" && req.method === "POST") {
    const { email, password } = await body(req);
    if (!email || !password) return fail(res, 401, 16, "wrong email or password");
    const session = randomBytes(16).toString("hex");
    const csrf = randomBytes(16).toString("hex");
    sessions.set(session, { csrf, email });
    return send(res, 200, { sessionToken: "", csrfToken: csrf, expiresAt: new Date(Date.now() + 8 * 3600e3).toISOString() }, {
      "set-cookie": `${COOKIE}=${session}; Path=/; Secure; HttpOnly; SameSite=Lax`,
    });
  }
  const s = sessions.get(cookieOf(req) ?? "");
  if (!s) return fail(res, 401, 16, "no credential: sign in");
  if (req.method !== "GET" && req.headers["x-csrf-token"] !== s.csrf) return fail(res, 403, 7, "missing X-CSRF-Token");
  const viewer = s.email.startsWith("viewer");
  if (path === "/v1/auth/browser-session" && req.method === "DELETE") {
    sessions.delete(cookieOf(req));
    return send(res, 200, {}, { "set-cookie": `${COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0` });
  }
  if (path === "/v1/auth/me") {
    return send(res, 200, {
      tenantId: "ten_demo",
      userId: "usr_demo",
      email: s.email,
      role: viewer ? "ROLE_VIEWER" : "ROLE_DEVELOPER",
      platformAdmin: false,
      credentialKind: "CREDENTIAL_KIND_ACCESS_TOKEN",
      apiKeyId: "",
    });
  }
  if (path === "/v1/images") return send(res, 200, { images: [{ name: "host" }, { name: "python-3.12" }], nextPageToken: "" });
  if (path === "/v1/sandbox-events") {
    res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-store" });
    res.flushHeaders();
    const w = { res, id: url.searchParams.get("sandboxId") };
    if (w.id && byId.has(w.id)) res.write(`${JSON.stringify({ kind: "SANDBOX_EVENT_KIND_STATE_CHANGED", sandbox: byId.get(w.id) })}\n`);
    watchers.add(w);
    req.on("close", () => watchers.delete(w));
    return;
  }
  if (path === "/v1/sandboxes" && req.method === "GET") {
    const states = url.searchParams.getAll("states");
    const labels = (url.searchParams.get("labelSelector") ?? "").split(",").filter(Boolean).map((p) => p.split("="));
    const meta = [...url.searchParams].filter(([k]) => k.startsWith("metadata[")).map(([k, v]) => [k.slice(9, -1), v]);
    const all = sandboxes.filter(
      (x) =>
        (states.length ? states.includes(x.state) : x.state !== "SANDBOX_STATE_DELETED") &&
        labels.every(([k, v]) => x.labels[k] === v) &&
        meta.every(([k, v]) => x.metadata[k] === v),
    );
    const from = Number(url.searchParams.get("pageToken") || 0);
    const size = Math.min(500, Number(url.searchParams.get("pageSize") || 50));
    return send(res, 200, { sandboxes: all.slice(from, from + size), nextPageToken: from + size < all.length ? String(from + size) : "" });
  }
  if (path === "/v1/sandboxes" && req.method === "POST") {
    if (viewer) return fail(res, 403, 7, "the viewer role may not call CreateSandbox");
    const b = await body(req);
    const now = new Date().toISOString();
    const x = { ...b, sandboxId: `sbx_${randomBytes(13).toString("hex")}`, tenantId: "ten_demo", state: "SANDBOX_STATE_RUNNING", createTime: now, updateTime: now, generation: "1", env: undefined };
    sandboxes.unshift(x);
    byId.set(x.sandboxId, x);
    changed(x, x.state);
    return send(res, 200, { sandbox: x });
  }
  const m = /^\/v1\/sandboxes\/([^/:]+)(?::(pause|resume|stop|start)|\/(processes))?$/.exec(path);
  const x = m && byId.get(decodeURIComponent(m[1]));
  if (!x) return fail(res, 404, 5, `sandbox ${m?.[1] ?? ""} not found`);
  if (!m[2] && !m[3] && req.method === "GET") return send(res, 200, { sandbox: x });
  if (viewer) return fail(res, 403, 7, "the viewer role may not do this");
  if (!m[2] && !m[3] && req.method === "DELETE") {
    changed(x, "SANDBOX_STATE_DELETED");
    return send(res, 200, {});
  }
  if (m[2]) {
    const to = { pause: STATES[1], resume: STATES[0], stop: STATES[2], start: STATES[0] }[m[2]];
    changed(x, to);
    return send(res, 200, { sandbox: x });
  }
  const { command = [] } = await body(req);
  res.writeHead(200, { "content-type": "application/x-ndjson" });
  const line = (o) => res.write(`${JSON.stringify(o)}\n`);
  const b64 = (t) => Buffer.from(t).toString("base64");
  line({ event: { started: { pid: 4242 } } });
  line({ event: { output: { stream: "OUTPUT_STREAM_STDOUT", data: b64(`ran: ${command.join(" ")}\n`), seq: "1" } } });
  setTimeout(() => {
    line({ event: { output: { stream: "OUTPUT_STREAM_STDERR", data: b64("a warning on stderr\n"), seq: "2" } } });
    line({ event: { exited: { exitCode: 3, signal: 0, timedOut: false } } });
    res.end();
  }, 300);
});

// The PTY: a tiny WebSocket server (RFC 6455, unfragmented frames).
server.on("upgrade", (req, sock) => {
  const s = sessions.get(cookieOf(req) ?? "");
  if (!s || !/^\/v1\/sandboxes\/[^/]+\/pty$/.test(new URL(req.url, "http://x").pathname)) return sock.destroy();
  const accept = createHash("sha1").update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
  const proto = (req.headers["sec-websocket-protocol"] ?? "").includes("talon.v1") ? "Sec-WebSocket-Protocol: talon.v1\r\n" : "";
  sock.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${proto}\r\n`);
  const frame = (op, data) => {
    const len = data.length;
    const head = len < 126 ? Buffer.from([0x80 | op, len]) : Buffer.from([0x80 | op, 126, len >> 8, len & 255]);
    sock.write(Buffer.concat([head, data]));
  };
  let buf = Buffer.alloc(0);
  let line = "";
  sock.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 6) {
      const op = buf[0] & 15;
      let len = buf[1] & 127;
      let off = 2;
      if (len === 126) [len, off] = [buf.readUInt16BE(2), 4];
      if (buf.length < off + 4 + len) return;
      const mask = buf.subarray(off, off + 4);
      const data = Buffer.from(buf.subarray(off + 4, off + 4 + len).map((b, i) => b ^ mask[i % 4]));
      buf = buf.subarray(off + 4 + len);
      if (op === 8) return sock.end();
      if (op === 1 && JSON.parse(data.toString()).open) {
        frame(1, Buffer.from(JSON.stringify({ pid: 100 })));
        frame(2, Buffer.from("mock shell (try: echo $((6*7)))\r\n$ "));
      } else if (op === 2) {
        for (const ch of data.toString()) {
          if (ch === "\r") {
            const mm = /echo \$\(\((\d+)\*(\d+)\)\)/.exec(line);
            frame(2, Buffer.from(`\r\n${mm ? Number(mm[1]) * Number(mm[2]) : line}\r\n$ `));
            line = "";
          } else {
            line += ch;
            frame(2, Buffer.from(ch));
          }
        }
      }
    }
  });
  sock.on("error", () => {});
});

server.listen(port, "127.0.0.1", () => console.log(`mock gateway: http://localhost:${port}/console/`));
