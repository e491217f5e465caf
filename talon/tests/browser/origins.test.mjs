// The escape suite's class "origins", in real Chromium: every way the
// gateway hands a browser bytes a sandbox chose, against a victim's
// session. A developer of tenant A, signed in to the gateway with a
// browser session, opens what tenant B's sandbox serves:
//
// - B's preview, in path mode (the gateway's origin) and subdomain mode;
// - B's browser's DevTools URLs after B's workload put its own server on
//   the DevTools port: the CDP proxy's JSON paths and any other path, and
//   the live view (our page, which reads the port's target list);
// - a file of B's sandbox through a signed download link.
//
// B's page (hostile-page.py) tries every way to act with A's session.
// None may work; the same calls from the gateway's own origin do (so the
// session is live and the test would see a regression). Needs TALON_URL
// (on 127.0.0.1, so that *.localhost previews are the default) and
// TALON_API_KEY (a platform admin's key) of a live `talon up`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const here = new URL(".", import.meta.url).pathname;
const base = process.env.TALON_URL;
const live = base && process.env.TALON_API_KEY;
const PORT = 8124;
const DEVTOOLS = 9222;

async function call(method, path, key, body, type = "application/json") {
  const headers = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = type;
  const r = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : body,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text.startsWith("{") && !text.includes("\n{") ? JSON.parse(text) : text;
}

async function tenant(admin, name) {
  const email = `${name}-${Date.now()}@origins.test`;
  const password = "origins-test-password";
  await call("POST", "/v1/tenants", admin, { name: `${name}-${Date.now()}`, ownerEmail: email, ownerPassword: password });
  const r = await fetch(base + "/v1/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const token = (await r.json()).tokens.accessToken;
  return { email, password, token };
}

async function sandbox(key, memoryMib = 256) {
  const r = await call("POST", "/v1/sandboxes?waitUntilRunning=true", key, { resources: { cpuMillis: 500, memoryMib } });
  return r.sandbox.sandboxId;
}

async function sh(key, id, script) {
  const out = await call("POST", `/v1/sandboxes/${id}/processes`, key, { command: ["sh", "-c", script] });
  assert.match(out, /"exitCode":0/, out);
  return out;
}

// Starts the hostile page on `port` of B's sandbox.
async function serveHostile(b, evil, port, victim = "") {
  await sh(b.token, evil, `nohup python3 /workspace/hostile.py ${port} ${victim} >/workspace/h${port}.log 2>&1 &
    for i in $(seq 1 200); do grep -q ready /workspace/h${port}.log 2>/dev/null && exit 0; sleep 0.05; done
    cat /workspace/h${port}.log; exit 1`);
}

// A fresh browser context in which A is signed in at `api`.
async function signedIn(browser, api, a, victim) {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  // A signs in: the session lands in an HttpOnly cookie.
  await page.goto(`${api}/openapi.json`);
  const status = await page.evaluate(async ([email, password]) => {
    const r = await fetch("/v1/auth/browser-session", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }),
    });
    return r.status;
  }, [a.email, a.password]);
  assert.equal(status, 200);
  // (Playwright's cookies(url) leaves Secure cookies out for http URLs.)
  const host = new URL(api).hostname;
  const cookiesOfApi = async () => (await context.cookies()).filter((c) => c.domain === host);
  const session = (await cookiesOfApi()).find((c) => c.name === "__Host-talon-session");
  assert.ok(session, "no session cookie");
  // The control: from the gateway's own origin, the session reads A's sandboxes.
  const own = await page.evaluate(async () => (await fetch("/v1/sandboxes")).text());
  assert.ok(own.includes(victim), own);
  return { context, page, session, cookiesOfApi };
}

// What must hold after A opened anything of B's: no command ran in A's
// sandbox, A's session is A's (nothing planted shadows it) and still
// works from the gateway's own origin.
async function unharmed(s, { a, victim, evil }) {
  const stat = await fetch(`${base}/v1/sandboxes/${victim}/files:stat?path=pwned.txt`, {
    headers: { authorization: `Bearer ${a.token}` },
  });
  assert.equal(stat.status, 404, "pwned.txt was written in A's sandbox");
  const after = (await s.cookiesOfApi()).filter((c) => !c.path.startsWith("/preview/"));
  const mine = after.find((c) => c.name === "__Host-talon-session");
  assert.equal(mine?.value, s.session.value, JSON.stringify(after));
  // (The gateway's own: the session, and the preview cookie and its
  // plain-http twin set with the token's redirect.)
  const ours = (n) => n.startsWith("__Host-talon-") || n === `talon-preview-${evil}-${PORT}`;
  for (const c of after) {
    assert.ok(ours(c.name), `B planted ${c.name} on ${c.domain}${c.path}: ${JSON.stringify(after)}`);
  }
  const still = await s.page.evaluate(async () => (await fetch("/v1/sandboxes")).text());
  assert.ok(still.includes(victim), still);
}

// Opens `link` (B's) as A, signed in at `api`, and checks that nothing
// B's page tried worked. `runs`: "opaque" (the page runs, in an opaque
// origin), "own" (it runs, in an origin of its own) or "never" (no script
// of B's runs at all).
async function attack(browser, api, link, { a, victim, evil, runs }) {
  const s = await signedIn(browser, api, a, victim);
  try {
    const page = await s.context.newPage();
    if (process.env.DEBUG_ORIGINS) {
      page.on("requestfailed", (r) => console.error("FAILED", r.url(), r.failure()?.errorText));
      page.on("requestfinished", async (r) => {
        const resp = await r.response();
        console.error("REQ", r.url(), JSON.stringify(await r.allHeaders()), resp && resp.status());
      });
    }
    const sep = link.includes("?") ? "&" : "?";
    await page.goto(`${link}${sep}victim=${victim}&api=${encodeURIComponent(api)}`);
    const done = await page.waitForFunction(() => document.title === "done", null, { timeout: runs === "never" ? 5000 : 30000 })
      .then(() => true, () => false);
    const results = await page.evaluate(() => (typeof results === "undefined" ? null : results));
    const shown = `${link}: ${JSON.stringify(results, null, 1)}`;
    if (runs === "never") {
      assert.ok(!done && results === null, `B's script ran: ${shown}`);
    } else {
      assert.ok(done, `the page did not finish: ${shown}`);
      if (runs === "opaque") {
        // The page runs in an opaque origin, not the gateway's.
        assert.equal(results.origin, "null", shown);
      } else {
        // An origin of its own...
        assert.equal(results.origin, new URL(link).origin, shown);
        // ...where its own resources load with its cookie.
        assert.deepEqual(results.own, { ok: true, value: "true" }, shown);
      }
      for (const name of ["list", "readFile", "exec"]) {
        const r = results[name];
        assert.ok(!r.ok || r.value.status >= 400, `${name} answered: ${shown}`);
        assert.ok(!JSON.stringify(r).includes("the-victims-secret"), `${name}: ${shown}`);
      }
      for (const name of ["iframe", "popup", "pty"]) {
        const r = results[name];
        assert.ok(!r.ok || !String(r.value).includes(victim), `${name} worked: ${shown}`);
        assert.ok(!JSON.stringify(r).includes("the-victims-secret"), `${name}: ${shown}`);
      }
      assert.ok(!results.cookie.ok || !String(results.cookie.value).includes("talon-session"), shown);
      // A service worker, if the page may have one at all (its own
      // origin), is kept to the preview.
      const sw = results.serviceWorker;
      assert.ok(!sw.ok || (runs === "own" && sw.value === new URL(link).origin + "/"), `serviceWorker: ${shown}`);
    }
    await unharmed(s, { a, victim, evil });
  } finally {
    await s.context.close();
  }
}

// Opens B's live view as A: our page, which must run in an opaque origin
// and never open anything of the API's, whatever the DevTools port says.
// `frames`: wait for the screen to be drawn (a real browser is there).
async function liveView(browser, url, { a, victim, evil, frames }) {
  const s = await signedIn(browser, base, a, victim);
  try {
    const page = await s.context.newPage();
    const sockets = [];
    page.on("websocket", (ws) => {
      const seen = { url: ws.url(), frames: 0 };
      sockets.push(seen);
      ws.on("framereceived", () => seen.frames++);
    });
    await page.goto(url);
    assert.equal(await page.evaluate(() => self.origin), "null", "the live view runs in the gateway's origin");
    if (frames) {
      await page.waitForFunction(() => Number(document.body.dataset.frames || 0) > 0, null, { timeout: 30000 });
    } else {
      await page.waitForTimeout(4000);
    }
    const api = sockets.filter((w) => !new URL(w.url).pathname.startsWith("/cdp/") && w.frames > 0);
    assert.deepEqual(api, [], `the live view talked to the API: ${JSON.stringify(sockets)}`);
    await unharmed(s, { a, victim, evil });
  } finally {
    await s.context.close();
  }
}

test("no page a sandbox chose acts with the visitor's session", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, async () => {
  const admin = process.env.TALON_API_KEY;
  const a = await tenant(admin, "victim");
  const b = await tenant(admin, "attacker");
  const victim = await sandbox(a.token);
  await sh(a.token, victim, "echo the-victims-secret > /workspace/secret.txt");
  const evil = await sandbox(b.token, 1024);
  const hostile = readFileSync(`${here}hostile-page.py`);
  await call("POST", `/v1/sandboxes/${evil}/files:write?path=hostile.py`, b.token, hostile, "application/octet-stream");
  await call("POST", `/v1/sandboxes/${evil}/files:write?path=hostile.html`, b.token,
    "<title>running</title><script>document.title = 'done'; window.results = {origin: String(self.origin)}</script>",
    "application/octet-stream");
  await serveHostile(b, evil, PORT);
  const link = await call("POST", `/v1/sandboxes/${evil}/preview-tokens`, b.token, { port: PORT });
  const ctx = { a, victim, evil };

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    // Previews. Path mode: served from the gateway's own origin.
    const path = `${base}/preview/${evil}/${PORT}/?token=${encodeURIComponent(link.token)}`;
    await attack(browser, base, path, { ...ctx, runs: "opaque" });
    // Subdomain mode (the default on loopback: *.localhost), with the
    // victim signed in on http://localhost:…, the same site as the
    // previews: the harder case, as SameSite cookies go along.
    assert.ok(link.url.includes(`-${evil}.localhost:`), link.url);
    await attack(browser, base.replace("127.0.0.1", "localhost"), link.url, { ...ctx, runs: "own" });

    // A signed download of B's file: saved, never shown.
    const file = await call("POST", `/v1/sandboxes/${evil}/file-urls`, b.token,
      { path: "hostile.html", operation: "FILE_URL_OPERATION_READ" });
    const got = await fetch(file.url);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get("content-type"), "application/octet-stream");
    assert.equal(got.headers.get("x-content-type-options"), "nosniff");
    assert.match(got.headers.get("content-disposition") ?? "", /^attachment/);
    const s = await signedIn(browser, base, a, victim);
    try {
      const page = await s.context.newPage();
      const answers = [];
      page.on("response", (r) => answers.push(`${r.status()} ${r.headers()["content-type"]}`));
      await page.goto(file.url).catch(() => {});
      await page.waitForTimeout(1000);
      const ran = await page.evaluate(() => document.title === "done").catch(() => false);
      assert.ok(!ran, `B's file ran as a page: ${answers}`);
      await unharmed(s, ctx);
    } finally {
      await s.context.close();
    }

    // B's browser: its DevTools URLs, and the live view of a real one.
    const started = await call("POST", `/v1/sandboxes/${evil}/browser:start`, b.token, {});
    const br = started.browser ?? started;
    assert.ok(br.cdpUrl.startsWith(`${base}/cdp/${evil}/`), JSON.stringify(br));
    await liveView(browser, br.liveViewUrl, { ...ctx, frames: true });
    // B's workload puts its own server on the DevTools port.
    await sh(b.token, evil, `kill -9 ${br.pid}`);
    await serveHostile(b, evil, DEVTOOLS, victim);
    // The proxy's JSON paths and anything else: B's page never runs
    // (`keep=1`: it leaves A's session be, and uses it).
    for (const p of ["/json/version?keep=1", "/json", "/", "/devtools/inspector.html"]) {
      await attack(browser, base, `${br.cdpUrl}${p}`, { ...ctx, runs: "never" });
    }
    // The live view reads B's target list, whose id climbs to A's PTY.
    await liveView(browser, br.liveViewUrl, { ...ctx, frames: false });
  } finally {
    await browser.close();
    await call("DELETE", `/v1/sandboxes/${victim}`, a.token).catch(() => {});
    await call("DELETE", `/v1/sandboxes/${evil}`, b.token).catch(() => {});
  }
});
