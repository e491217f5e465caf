// The web console's figures for talon-bench (bench/src/console.rs):
//
// - the entry bundle's gzipped size (what a first visit downloads before
//   anything shows; clients/console/scripts/entry.mjs), from clients/console/dist;
// - the time from navigation to the first row of the sandbox list with
//   1,000 sandboxes, in Debian's Chromium against the console's stand-in
//   gateway (clients/console/scripts/mock-gateway.mjs: 1,000 sandboxes,
//   no platform), beside the baseline measured in the same browser a
//   moment before: a page of the same origin with no framework that reads
//   the same first page of the list (200, as the console asks) and writes
//   it as a plain <table>.
//
// Each time is taken in the page: performance.now() (from the navigation's
// start) in the animation frame after the first row is in the document.
// Prints one JSON line: {"entry_gz_bytes", "console_ms": [...], "baseline_ms": [...]}.
// Needs clients/console built (./build.sh) and its node_modules (playwright-core).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";

const root = new URL("../../", import.meta.url).pathname;
const consoleDir = `${root}clients/console/`;
const dist = `${consoleDir}dist/`;
const runs = Number(process.env.BENCH_RUNS ?? 10);
const warm = Number(process.env.BENCH_WARMUP ?? 2);

if (!existsSync(`${dist}index.html`)) {
  console.error("clients/console/dist is missing: run clients/console/build.sh first");
  process.exit(2);
}
const require = createRequire(`${consoleDir}package.json`);
const { chromium } = require("playwright-core");

// The entry bundle, counted as the build's budget counts it.
const { entryBundle } = await import(`${consoleDir}scripts/entry.mjs`);
const bundle = entryBundle(dist);
const entryGz = bundle.gzBytes;
const entry = [...bundle.files].join(" + ");

const freePort = () =>
  new Promise((ok, bad) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on("error", bad);
  });

const port = await freePort();
const mock = spawn(process.execPath, [`${consoleDir}scripts/mock-gateway.mjs`, String(port)], { stdio: ["ignore", "pipe", "inherit"] });
const origin = `http://127.0.0.1:${port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${origin}/console/`)).ok) break;
    } catch {
      /* not yet */
    }
    if (i > 100) throw new Error("the stand-in gateway did not start");
    await new Promise((r) => setTimeout(r, 50));
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // First row: in the frame after it is in the document.
  await context.addInitScript((selector) => {
    const seen = () => {
      if (window.__firstRow !== undefined || !document.querySelector(selector)) return false;
      window.__firstRow = null;
      requestAnimationFrame(() => (window.__firstRow = performance.now()));
      return true;
    };
    new MutationObserver((_, o) => seen() && o.disconnect()).observe(document, { subtree: true, childList: true });
  }, '[role="rowgroup"] [role="row"], table.baseline tbody tr');
  const page = await context.newPage();
  // Signed in once: the session cookie serves every run.
  await page.goto(`${origin}/console/sign-in`);
  await page.getByLabel("Email").fill("bench@talon.test");
  await page.getByLabel("Password").fill("bench");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${origin}/console/sandboxes`);
  await page.route(`${origin}/bench-baseline`, (r) =>
    r.fulfill({
      contentType: "text/html",
      body: `<!doctype html><meta charset="utf-8"><title>baseline</title><table class="baseline"><thead><tr><th>Sandbox</th><th>State</th><th>Image</th><th>Created</th></tr></thead><tbody></tbody></table>
<script>
fetch("/v1/sandboxes?pageSize=200").then((r) => r.json()).then((d) => {
  const tb = document.querySelector("tbody");
  const frag = document.createDocumentFragment();
  for (const s of d.sandboxes) {
    const tr = document.createElement("tr");
    for (const v of [s.sandboxId, s.state, s.image, s.createTime]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.append(td);
    }
    frag.append(tr);
  }
  tb.append(frag);
});
</script>`,
    }),
  );
  const measure = async (url) => {
    await page.goto(url);
    await page.waitForFunction(() => typeof window.__firstRow === "number", null, { timeout: 30_000 });
    return page.evaluate(() => window.__firstRow);
  };
  const consoleMs = [];
  const baselineMs = [];
  for (let i = 0; i < warm + runs; i++) {
    const b = await measure(`${origin}/bench-baseline`);
    const c = await measure(`${origin}/console/sandboxes`);
    if (i >= warm) {
      baselineMs.push(b);
      consoleMs.push(c);
    }
  }
  const rows = await page.locator('[role="rowgroup"] [role="row"]').count();
  console.error(`console: ${rows} rows in the document for 1,000 sandboxes (virtualised)`);
  console.log(JSON.stringify({ entry_gz_bytes: entryGz, entry, console_ms: consoleMs, baseline_ms: baselineMs, rows_in_document: rows }));
} finally {
  await browser.close();
  mock.kill();
}
