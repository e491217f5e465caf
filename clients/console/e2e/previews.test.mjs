// Preview links from the page: a web server started in the sandbox (REST)
// is listed by its port, a link is made for it (with a lifetime), copied,
// and opened in a new tab, which shows what the server serves.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { cleanUp, launch, results, skip } from "./lib.mjs";
import { signedInOn, startServer, toast } from "./tools.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

test("make a preview link for a port a server listens on, copy it and open it", { skip }, async () => {
  const marker = `preview-e2e-${Date.now().toString(36)}`;
  const { id, context, page, problems } = await signedInOn(browser, "previews", "previews", {
    before: (t, s) => startServer(t, s.sandboxId, 8000, `<!doctype html><title>${marker}</title><h1>${marker}</h1>\n`),
  });
  try {
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.getByRole("heading", { level: 2, name: "Preview links" }).waitFor();
    const ports = page.getByRole("table", { name: "Listening ports" });
    await ports.getByRole("cell", { name: "8000", exact: true }).waitFor();

    // A bad port or lifetime is named before anything is sent.
    await page.getByLabel("Port", { exact: true }).fill("9222");
    await page.getByRole("button", { name: "Make a link", exact: true }).click();
    await page.getByText("Port 9222 is the browser's DevTools port, which is never a preview").waitFor();
    await page.getByLabel("Port", { exact: true }).fill("8000");
    await page.getByLabel("Lifetime (seconds)").fill("100000");
    await page.getByRole("button", { name: "Make a link", exact: true }).click();
    await page.getByText("The lifetime must be 1 to 86,400").waitFor();

    // The row's button, with a lifetime of ten minutes.
    await page.getByLabel("Lifetime (seconds)").fill("600");
    const asked = page.waitForRequest((r) => r.url().endsWith(`/v1/sandboxes/${id}/preview-tokens`));
    await ports.getByRole("button", { name: "Make a link to port 8000" }).click();
    assert.deepEqual((await asked).postDataJSON(), { port: 8000, ttl: "600s" });
    await toast(page, "Preview link made").waitFor();
    const url = await page.getByLabel("Preview link to port 8000").inputValue();
    assert.match(url, new RegExp(`^http://8000-${id}\\.localhost:\\d+/\\?token=|/preview/${id}/8000/\\?token=`));

    // Copy puts the link on the clipboard.
    await page.getByRole("button", { name: "Copy", exact: true }).click();
    await toast(page, "Copied").waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);

    // Open: a new tab, without an opener or a referrer, showing the server's page.
    const open = page.getByRole("link", { name: /^Open/ });
    assert.equal(await open.getAttribute("target"), "_blank");
    assert.equal(await open.getAttribute("rel"), "noopener noreferrer");
    const [tab] = await Promise.all([context.waitForEvent("page"), open.click()]);
    await tab.waitForLoadState("domcontentloaded");
    await tab.getByRole("heading", { name: marker }).waitFor();
    assert.equal(await tab.evaluate(() => window.opener), null);
    // The token left the address bar (exchanged for a cookie).
    assert.doesNotMatch(tab.url(), /token=/);
    await tab.close();
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } catch (e) {
    await page.screenshot({ path: results("previews-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
});
