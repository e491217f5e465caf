// Previews against the API in real Chromium, with a victim's session: a
// developer of tenant A, signed in to the gateway with a browser session,
// opens a preview link of tenant B's, in path mode and in subdomain mode.
// B's page (hostile-preview.py, in B's sandbox) tries every way to act
// with A's session. None may work; the same calls from the gateway's own
// origin do (so the session is live and the test would see a
// regression). Needs TALON_URL (on 127.0.0.1, so that *.localhost
// previews are the default) and TALON_API_KEY (a platform admin's key) of
// a live `talon up`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const here = new URL(".", import.meta.url).pathname;
const base = process.env.TALON_URL;
const live = base && process.env.TALON_API_KEY;
const PORT = 8124;

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
  const email = `${name}-${Date.now()}@preview-origin.test`;
  const password = "preview-origin-password";
  await call("POST", "/v1/tenants", admin, { name: `${name}-${Date.now()}`, ownerEmail: email, ownerPassword: password });
  const r = await fetch(base + "/v1/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const token = (await r.json()).tokens.accessToken;
  return { email, password, token };
}

async function sandbox(key) {
  const r = await call("POST", "/v1/sandboxes?waitUntilRunning=true", key, { resources: { cpuMillis: 500, memoryMib: 256 } });
  return r.sandbox.sandboxId;
}

async function sh(key, id, script) {
  const out = await call("POST", `/v1/sandboxes/${id}/processes`, key, { command: ["sh", "-c", script] });
  assert.match(out, /"exitCode":0/, out);
  return out;
}

// Signs A in at `api` in a fresh browser context, opens `link` (B's
// preview) there, and checks that nothing B's page tried worked.
async function attack(browser, api, link, { a, victim, evil, opaque }) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    // A signs in: the session lands in an HttpOnly cookie.
    await page.goto(`${api}/openapi.json`);
    const signedIn = await page.evaluate(async ([email, password]) => {
      const r = await fetch("/v1/auth/browser-session", {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }),
      });
      return r.status;
    }, [a.email, a.password]);
    assert.equal(signedIn, 200);
    // (Playwright's cookies(url) leaves Secure cookies out for http URLs.)
    const host = new URL(api).hostname;
    const cookiesOfApi = async () => (await context.cookies()).filter((c) => c.domain === host);
    const session = (await cookiesOfApi()).find((c) => c.name === "__Host-talon-session");
    assert.ok(session, "no session cookie");
    // The control: from the gateway's own origin, the session reads A's sandboxes.
    const own = await page.evaluate(async () => (await fetch("/v1/sandboxes")).text());
    assert.ok(own.includes(victim), own);

    // A opens B's preview link.
    const preview = await context.newPage();
    if (process.env.DEBUG_PREVIEW) {
      preview.on("requestfailed", (r) => console.error("FAILED", r.url(), r.failure()?.errorText));
      preview.on("requestfinished", async (r) => {
        const resp = await r.response();
        console.error("REQ", r.url(), JSON.stringify(await r.allHeaders()), resp && resp.status());
      });
    }
    await preview.goto(`${link}&victim=${victim}&api=${encodeURIComponent(api)}`);
    await preview.waitForFunction(() => document.title === "done", null, { timeout: 30000 });
    const results = await preview.evaluate(() => results);
    const shown = `${link}: ${JSON.stringify(results, null, 1)}`;
    if (opaque) {
      // The page runs in an opaque origin, not the gateway's.
      assert.equal(results.origin, "null", shown);
    } else {
      // An origin of its own.
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
    // A service worker, if the page may have one at all (its own origin),
    // is kept to the preview.
    const sw = results.serviceWorker;
    assert.ok(!sw.ok || (!opaque && sw.value === new URL(link).origin + "/"), `serviceWorker: ${shown}`);
    // No command ran in A's sandbox.
    const stat = await fetch(`${base}/v1/sandboxes/${victim}/files:stat?path=pwned.txt`, {
      headers: { authorization: `Bearer ${a.token}` },
    });
    assert.equal(stat.status, 404, "pwned.txt was written in A's sandbox");
    // The cookies the preview tried to plant on the API's paths did not
    // take: A's session is A's, and nothing shadows it.
    const after = (await cookiesOfApi()).filter((c) => !c.path.startsWith("/preview/"));
    const mine = after.find((c) => c.name === "__Host-talon-session");
    assert.equal(mine?.value, session.value, JSON.stringify(after));
    // (The gateway's own: the session, and the preview cookie and its
    // plain-http twin set with the token's redirect.)
    const ours = (n) => n.startsWith("__Host-talon-") || n === `talon-preview-${evil}-${PORT}`;
    for (const c of after) {
      assert.ok(ours(c.name), `a preview planted ${c.name} on ${c.domain}${c.path}: ${JSON.stringify(after)}`);
    }
    // And the session still works from the gateway's own origin.
    const still = await page.evaluate(async () => (await fetch("/v1/sandboxes")).text());
    assert.ok(still.includes(victim), still);
  } finally {
    await context.close();
  }
}

test("a preview cannot act with the visitor's session", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, async () => {
  const admin = process.env.TALON_API_KEY;
  const a = await tenant(admin, "victim");
  const b = await tenant(admin, "attacker");
  const victim = await sandbox(a.token);
  await sh(a.token, victim, "echo the-victims-secret > /workspace/secret.txt");
  const evil = await sandbox(b.token);
  await call("POST", `/v1/sandboxes/${evil}/files:write?path=hostile.py`, b.token,
    readFileSync(`${here}hostile-preview.py`), "application/octet-stream");
  await sh(b.token, evil, `nohup python3 /workspace/hostile.py ${PORT} >/workspace/h.log 2>&1 &
    for i in $(seq 1 100); do grep -q ready /workspace/h.log 2>/dev/null && exit 0; sleep 0.05; done; exit 1`);
  const link = await call("POST", `/v1/sandboxes/${evil}/preview-tokens`, b.token, { port: PORT });

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    // Path mode: the preview is served from the gateway's own origin.
    const path = `${base}/preview/${evil}/${PORT}/?token=${encodeURIComponent(link.token)}`;
    await attack(browser, base, path, { a, victim, evil, opaque: true });
    // Subdomain mode (the default on loopback: *.localhost), with the
    // victim signed in on http://localhost:…, the same site as the
    // previews: the harder case, as SameSite cookies go along.
    assert.ok(link.url.includes(`-${evil}.localhost:`), link.url);
    await attack(browser, base.replace("127.0.0.1", "localhost"), link.url, { a, victim, evil, opaque: false });
  } finally {
    await browser.close();
    await call("DELETE", `/v1/sandboxes/${victim}`, a.token).catch(() => {});
    await call("DELETE", `/v1/sandboxes/${evil}`, b.token).catch(() => {});
  }
});
