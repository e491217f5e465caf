// The sandbox's browser through the TypeScript SDK against a live `talon up`
// (TALON_URL, TALON_API_KEY): the unmodified Playwright
// (`chromium.connectOverCDP(cdpUrl)`) and Puppeteer
// (`connect({ browserWSEndpoint })`) drive it through the gateway.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { Sandbox } from "../src/index.js";

const live = Boolean(process.env.TALON_API_KEY);
const PNG = [0x89, 0x50, 0x4e, 0x47];

describe("browser", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, () => {
  let sbx: Sandbox;
  before(async () => {
    sbx = await Sandbox.create("host", { memoryMib: 1024, timeoutMs: 600_000 });
  });
  after(async () => {
    await sbx?.kill();
  });

  it("is driven by Playwright and Puppeteer through cdpUrl, and screenshots", async () => {
    // A site served inside the same sandbox, on its loopback.
    await sbx.files.write("site/index.html", "<title>served in the sandbox</title>");
    await sbx.commands.run("python3 -m http.server 8124 --bind 127.0.0.1 --directory /workspace/site", {
      background: true,
    });
    const info = await sbx.browser.start({ windowSize: "1000,700" });
    assert.equal(info.state, "running");
    assert.ok(info.cdpUrl.includes("/cdp/"), info.cdpUrl);
    assert.ok(!info.websocketDebuggerUrl.includes("127.0.0.1:9222"));

    const pw = await chromium.connectOverCDP(info.cdpUrl);
    const ctx = pw.contexts()[0];
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const served = "http://127.0.0.1:8124/";
    for (let i = 0; ; i++) {
      try {
        await page.goto(served);
        break;
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    assert.equal(await page.title(), "served in the sandbox");
    await page.setContent(`<title>pw</title><h1 id="t">before</h1><button onclick="t.textContent='after'">go</button>`);
    await page.click("button");
    assert.equal(await page.innerText("#t"), "after");
    const shot = await sbx.browser.screenshot();
    assert.deepEqual([...shot.slice(0, 4)], PNG);
    await pw.close();

    const pp = await puppeteer.connect({ browserWSEndpoint: info.websocketDebuggerUrl, defaultViewport: null });
    const p = await pp.newPage();
    await p.goto(served);
    assert.equal(await p.title(), "served in the sandbox");
    await p.setContent(`<title>pp</title><p id="x">from puppeteer</p>`);
    assert.equal(await p.$eval("#x", (e) => e.textContent), "from puppeteer");
    assert.equal(await p.title(), "pp");
    const pages = await pp.pages();
    assert.ok(pages.length >= 2, "Playwright's page and Puppeteer's share the browser");
    await p.close();
    await pp.disconnect();

    const again = await sbx.browser.get();
    assert.equal(again.pid, info.pid);
    const stopped = await sbx.browser.stop();
    assert.equal(stopped.state, "stopped");
    assert.equal(stopped.cdpUrl, "");
    await assert.rejects(sbx.browser.screenshot(), /not running/);
  });
});
