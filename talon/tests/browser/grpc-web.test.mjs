// grpc-web from headless Chromium: the page (page.ts, bundled here with
// esbuild after buf generates its descriptors) calls talon's gRPC port
// through tonic-web, across origins (the server lists this page's origin
// with --grpc-web-origin). Needs TALON_GRPC_URL, TALON_API_KEY and
// TALON_PAGE_PORT (the page's port, the one that origin names).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const here = new URL(".", import.meta.url).pathname;
const live = process.env.TALON_GRPC_URL && process.env.TALON_API_KEY && process.env.TALON_PAGE_PORT;

test("grpc-web from a browser page", { skip: !live && "needs TALON_GRPC_URL, TALON_API_KEY, TALON_PAGE_PORT" }, async () => {
  const buf = process.env.BUF ?? `${here}../../../.tools/node_modules/.bin/buf`;
  execFileSync(buf, ["generate", "../../../proto", "--template", "buf.gen.yaml", "--path", "../../../proto/talon/v1", "--path", "../../../proto/google/api"], {
    cwd: here,
    stdio: "inherit",
  });
  execFileSync(`${here}node_modules/.bin/esbuild`, ["page.ts", "--bundle", "--format=esm", "--outfile=dist/page.js"], {
    cwd: here,
    stdio: "inherit",
  });
  const js = readFileSync(`${here}dist/page.js`);
  const html = `<!doctype html><meta charset="utf-8"><title>talon grpc-web</title><script type="module" src="/page.js"></script>`;
  const server = createServer((req, res) => {
    if (req.url === "/page.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(js);
    } else {
      res.writeHead(200, { "content-type": "text/html" }).end(html);
    }
  });
  const port = Number(process.env.TALON_PAGE_PORT);
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => typeof window.talonDemo === "function");
    const r = await page.evaluate(([url, key]) => window.talonDemo(url, key), [
      process.env.TALON_GRPC_URL,
      process.env.TALON_API_KEY,
    ]);
    assert.match(String(r.tenantId), /^ten_/);
    assert.match(String(r.sandboxId), /^sbx_/);
    assert.equal(r.listed, true);
    // SANDBOX_STATE_RUNNING is 3; Code.NotFound is 5.
    assert.equal(r.state, 3);
    assert.equal(r.notFound, "5");
  } finally {
    await browser.close();
    server.close();
  }
});
