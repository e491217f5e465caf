// A Vite-style app through the SDKs' preview link, in real Chromium: its
// page loads a stylesheet, a module script and JSON by root-absolute
// paths (/style.css, /assets/app.js, /api/data.json), which only work
// when the preview is an origin of its own. The link is what
// CreatePreviewToken (and so every SDK's preview_url) gives: signed, in
// subdomain form on loopback (*.localhost, no DNS set-up). Needs TALON_URL
// (on 127.0.0.1) and TALON_API_KEY of a live `talon up`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const base = process.env.TALON_URL;
const key = process.env.TALON_API_KEY;
const PORT = 5173;

async function call(method, path, body, type = "application/json") {
  const r = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": type }) },
    body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : body,
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text.startsWith("{") && !text.includes("\n{") ? JSON.parse(text) : text;
}

const files = {
  "index.html": `<!doctype html><html><head><title>app</title>
<link rel="stylesheet" href="/style.css">
<script type="module" src="/assets/app.js"></script></head>
<body><h1 id="t">waiting</h1></body></html>`,
  "style.css": "h1 { color: rgb(1, 2, 3); }",
  "assets/app.js": `const r = await fetch("/api/data.json");
document.getElementById("t").textContent = (await r.json()).message;
document.title = "loaded";`,
  "api/data.json": JSON.stringify({ message: "from the sandbox" }),
};

test("a preview link serves an app with root-absolute assets", { skip: !(base && key) && "needs TALON_URL and TALON_API_KEY" }, async () => {
  const id = (await call("POST", "/v1/sandboxes?waitUntilRunning=true", { resources: { cpuMillis: 500, memoryMib: 256 } })).sandbox.sandboxId;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    for (const [path, body] of Object.entries(files)) {
      await call("POST", `/v1/sandboxes/${id}/files:write?path=app/${path}&create_parents=true`, body, "application/octet-stream");
    }
    const out = await call("POST", `/v1/sandboxes/${id}/processes`, {
      command: ["sh", "-c", `cd /workspace/app && (python3 -m http.server ${PORT} >/dev/null 2>&1 &)
        for i in $(seq 1 100); do python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${PORT}))' 2>/dev/null && exit 0; sleep 0.05; done; exit 1`],
    });
    assert.match(out, /"exitCode":0/, out);
    const link = (await call("POST", `/v1/sandboxes/${id}/preview-tokens`, { port: PORT })).url;
    assert.ok(link.includes(`-${id}.localhost:`) && link.includes("token="), link);

    const page = await (await browser.newContext()).newPage();
    const failed = [];
    page.on("requestfailed", (r) => failed.push(r.url()));
    page.on("response", (r) => r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`));
    await page.goto(link);
    await page.waitForFunction(() => document.title === "loaded", null, { timeout: 15000 });
    assert.equal(await page.textContent("#t"), "from the sandbox");
    assert.equal(await page.$eval("#t", (e) => getComputedStyle(e).color), "rgb(1, 2, 3)");
    // The token left the address bar for a cookie of this preview.
    assert.ok(!page.url().includes("token="), page.url());
    assert.deepEqual(failed, []);
  } finally {
    await browser.close();
    await call("DELETE", `/v1/sandboxes/${id}`).catch(() => {});
  }
});
