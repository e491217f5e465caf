// Cross-origin requests with a visitor's session: a developer signed in
// to the console opens a page of another origin (a small HTTP server
// here), which auto-submits forms to the gateway's API (and a no-cors
// fetch, and a sign-in into an account of its own: login CSRF). The
// other origin is 127.0.0.1 on another port (same site: the SameSite=Lax
// cookie goes along, so the gateway's Origin and CSRF checks are what
// refuse it) and localhost on that port (another site: the cookie stays
// home). Each is refused, and nothing is made or changed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import {
  addUser,
  base,
  cleanUp,
  consoleUrl,
  getSandbox,
  launch,
  listSandboxes,
  makeSandbox,
  makeTenant,
  newSession,
  report,
  signIn,
  skip,
} from "./lib.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

const esc = (s) => s.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");

/** A page that posts a form as soon as it loads. */
function formPage(action, enctype, fields) {
  const inputs = fields.map(([n, v]) => `<input type="hidden" name="${esc(n)}" value="${esc(v)}">`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>a page elsewhere</title></head><body>
<form id="f" method="POST" action="${esc(action)}" enctype="${enctype}">${inputs}</form>
<script>document.getElementById("f").submit();</script></body></html>`;
}

/** The pages of the other origin, by path; `victim` is a sandbox of the visitor's tenant. */
function pages(victim, attacker) {
  // text/plain: the body reads as JSON ({"resources":…,"x":"="}).
  const json = ['{"resources":{"cpuMillis":250,"memoryMib":256},"metadata":{"made":"by-csrf"},"x":"', '"}'];
  return {
    "/create-text": formPage(`${base}/v1/sandboxes`, "text/plain", [json]),
    "/create-urlencoded": formPage(`${base}/v1/sandboxes`, "application/x-www-form-urlencoded", [
      ["resources.cpuMillis", "250"],
      ["metadata", "by-csrf"],
    ]),
    "/create-multipart": formPage(`${base}/v1/sandboxes`, "multipart/form-data", [["image", "host"]]),
    "/pause": formPage(`${base}/v1/sandboxes/${victim}:pause`, "text/plain", [['{"x":"', '"}']]),
    "/run": formPage(`${base}/v1/sandboxes/${victim}/processes`, "text/plain", [
      ['{"command":["sh","-c","touch /workspace/pwned"],"x":"', '"}'],
    ]),
    // Login CSRF: signs the visitor in to the attacker's account.
    "/sign-in": formPage(`${base}/v1/auth/browser-session`, "text/plain", [
      [`{"email":"${attacker.email}","password":"${attacker.password}","x":"`, '"}'],
    ]),
    // A no-cors fetch carries cookies and a text/plain body without a preflight.
    "/fetch": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>fetch</title></head><body><script>
      fetch(${JSON.stringify(`${base}/v1/sandboxes`)}, { method: "POST", mode: "no-cors", credentials: "include",
        headers: { "content-type": "text/plain" }, body: ${JSON.stringify(json.join("="))} })
        .then(() => { document.title = "sent"; }, (e) => { document.title = "failed: " + e; });
    </script></body></html>`,
  };
}

test("a cross-origin form post with the visitor's cookie is refused and creates nothing", { skip }, async () => {
  const t = await makeTenant("csrf");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const attackerTenant = await makeTenant("csrf-attacker");
  const victim = await makeSandbox(t);
  const site = pages(victim.sandboxId, attackerTenant);
  const server = createServer((req, res) => {
    const body = site[new URL(req.url, "http://x").pathname];
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const port = server.address().port;
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, dev);
    const session = (await context.cookies()).find((c) => c.name === "__Host-talon-session").value;
    const outcomes = [];
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const sameSite = origin.includes("127.0.0.1");
      for (const path of Object.keys(site)) {
        const evil = await context.newPage();
        try {
          const toGateway = evil.waitForRequest((r) => r.url().startsWith(`${base}/v1/`) && r.method() === "POST");
          await evil.goto(origin + path);
          const req = await toGateway;
          // A form navigates to the answer; the fetch says when it is done.
          if (path === "/fetch") await evil.waitForFunction(() => document.title !== "fetch");
          else await evil.waitForURL(`${base}/v1/**`, { waitUntil: "load" });
          const resp = await req.response();
          const cookie = (await req.headerValue("cookie")) ?? "";
          const status = resp ? resp.status() : "opaque";
          const o = { origin, path, status, cookieSent: cookie.includes("__Host-talon-session=") };
          if (resp) o.body = (await resp.text().catch((e) => `(unread: ${e.message})`)).slice(0, 160);
          outcomes.push(o);
          // The same-site page's form carries the session: the gateway is
          // what refuses it. (Chromium does not report the cookie header of
          // a no-cors fetch to Playwright.)
          if (sameSite && path !== "/fetch") assert.ok(o.cookieSent, `the cookie did not go along: ${JSON.stringify(o)}`);
          // Refused: 403 (a foreign Origin), or 401 (no cookie reached it).
          if (status !== "opaque") assert.ok(status === 403 || (!o.cookieSent && status === 401), JSON.stringify(o));
        } finally {
          await evil.close();
        }
      }
    }
    report("cross-origin.json", "outcomes", outcomes);

    // Nothing was made or changed; the visitor is still themself.
    const after = await listSandboxes(t);
    assert.deepEqual(after.map((s) => s.sandboxId), [victim.sandboxId]);
    assert.equal((await getSandbox(t, victim.sandboxId)).state, "SANDBOX_STATE_RUNNING");
    assert.deepEqual(await listSandboxes(attackerTenant), []);
    const stat = await fetch(`${base}/v1/sandboxes/${victim.sandboxId}/files:stat?path=pwned`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    assert.equal(stat.status, 404, "the cross-origin form ran a command");
    const now = (await context.cookies()).find((c) => c.name === "__Host-talon-session")?.value;
    assert.equal(now, session, "a page elsewhere replaced the visitor's session (login CSRF)");
    await page.goto(`${consoleUrl}/me`);
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
    assert.ok((await page.locator("dl").innerText()).includes(dev.email));
    // The control: the same create from the console's own origin, with its token, works.
    const own = await page.evaluate(async () => {
      const r = await fetch("/v1/sandboxes", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": sessionStorage.getItem("talon.csrf") },
        body: JSON.stringify({ resources: { cpuMillis: 250, memoryMib: 256 } }),
      });
      return r.status;
    });
    assert.equal(own, 200);
    assert.equal((await listSandboxes(t)).length, 2);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
    server.close();
  }
});
