// The egress policy from the page: the network tab shows the policy and
// changes it (an allowlist of domains and CIDRs, then deny all), each
// change read back through REST; a bad entry is named before anything is
// sent. And the create dialog: a policy and a volume mount on create
// (this platform has no shared-storage worker, so the mount is refused
// by the server, readably, in the dialog).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, cleanUp, consoleUrl, getSandbox, launch, results, skip, unique } from "./lib.mjs";
import { signedInOn, toast } from "./tools.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

test("change the network policy from the page; REST reads the change", { skip }, async () => {
  const { t, id, context, page, problems } = await signedInOn(browser, "network", "network");
  try {
    const now = page.getByRole("region", { name: "Egress now" });
    await now.getByText("Allow all", { exact: true }).waitFor();
    const form = page.getByRole("group", { name: "Change the egress policy" });
    assert.equal(await form.getByRole("radio", { name: "Allow all" }).isChecked(), true);
    assert.equal(await page.getByRole("button", { name: "Save policy" }).isDisabled(), true);

    // An allowlist: a bad domain is named beside its field, nothing is sent.
    await form.getByRole("radio", { name: "Allowlist" }).check();
    await form.getByLabel("Allowed domains").fill("example.com\nbad_domain.org");
    await form.getByLabel("Allowed IPv4 CIDRs").fill("1.1.1.1/32, 203.0.113.0/24");
    await page.getByRole("button", { name: "Save policy" }).click();
    await page.getByText("bad_domain.org is not a domain name").waitFor();
    assert.equal((await getSandbox(t, id)).networkPolicy.mode, "EGRESS_MODE_OPEN");

    await form.getByLabel("Allowed domains").fill("example.com\n*.pypi.org");
    await page.getByRole("button", { name: "Save policy" }).click();
    await toast(page, "Network policy changed").waitFor();
    await now.getByText("Allowlist", { exact: true }).waitFor();
    assert.match(await now.innerText(), /example\.com, \*\.pypi\.org/);
    assert.deepEqual((await getSandbox(t, id)).networkPolicy, {
      mode: "EGRESS_MODE_ALLOWLIST",
      allowDomains: ["example.com", "*.pypi.org"],
      allowCidrs: ["1.1.1.1/32", "203.0.113.0/24"],
    });

    // Deny all.
    await form.getByRole("radio", { name: "Deny all" }).check();
    await page.getByRole("button", { name: "Save policy" }).click();
    await now.getByText("Deny all", { exact: true }).waitFor();
    const p = (await getSandbox(t, id)).networkPolicy;
    assert.equal(p.mode, "EGRESS_MODE_DENY");
    assert.deepEqual([p.allowDomains, p.allowCidrs], [[], []]);
    // The overview's page was updated too: reloading shows the same.
    await page.reload();
    await page.getByRole("region", { name: "Egress now" }).getByText("Deny all", { exact: true }).waitFor();
    assert.equal(await page.getByRole("radio", { name: "Deny all" }).isChecked(), true);
    assert.deepEqual(problems.errors, []);
  } catch (e) {
    await page.screenshot({ path: results("network-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
});

test("the create dialog: an egress policy and volumes to mount", { skip }, async () => {
  const { t, context, page, problems } = await signedInOn(browser, "create-net", "");
  const volume = unique("v").toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, 40);
  await call("POST", "/v1/volumes", t.token, { volume: { name: volume, sizeMib: 64 } });
  try {
    await page.goto(`${consoleUrl}/sandboxes`);
    await page.getByRole("button", { name: "New sandbox" }).click();
    const dialog = page.getByRole("dialog", { name: "New sandbox" });
    await dialog.waitFor();
    await dialog.getByLabel("CPU (millis)", { exact: true }).fill("250");
    await dialog.getByLabel("Memory (MiB)", { exact: true }).fill("256");

    // A volume of the tenant's, mounted at a path; a bad path is named first.
    const vols = dialog.getByRole("group", { name: "Volumes" });
    await vols.getByRole("button", { name: "Add a volume" }).click();
    await vols.getByLabel("Volume 1", { exact: true }).selectOption(volume);
    await vols.getByLabel("Mount path 1", { exact: true }).fill("/proc/data");
    await dialog.getByRole("button", { name: "Create" }).click();
    await vols.getByText("A volume cannot be mounted under /proc").waitFor();
    await vols.getByLabel("Mount path 1", { exact: true }).fill("/workspace/data");
    const sent = page.waitForRequest((r) => r.url().endsWith("/v1/sandboxes") && r.method() === "POST");
    await dialog.getByRole("button", { name: "Create" }).click();
    assert.deepEqual((await sent).postDataJSON().volumeMounts, [{ name: volume, path: "/workspace/data", readOnly: false }]);
    // No shared-storage worker here: the server's refusal, in words, in the dialog.
    const refused = dialog.getByRole("alert");
    await refused.waitFor();
    assert.match(await refused.innerText(), /^Not possible in its current state\. .*shared/);

    // Without the volume, sealed: created with that policy.
    await vols.getByRole("button", { name: `Remove volume ${volume}` }).click();
    const net = dialog.getByRole("group", { name: "Network (egress)" });
    await net.getByRole("radio", { name: "Allowlist" }).check();
    await net.getByLabel("Allowed domains").fill("pypi.org");
    await net.getByRole("radio", { name: "Sealed" }).check();
    const created = page.waitForResponse((r) => r.url().endsWith("/v1/sandboxes") && r.request().method() === "POST");
    await dialog.getByRole("button", { name: "Create" }).click();
    const resp = await created;
    assert.equal(resp.status(), 200, await resp.text());
    const id = (await resp.json()).sandbox.sandboxId;
    await page.waitForURL(`${consoleUrl}/sandboxes/${id}`);
    const p = (await getSandbox(t, id)).networkPolicy;
    assert.equal(p.mode, "EGRESS_MODE_SEALED");
    await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Network" }).click();
    await page.getByRole("region", { name: "Egress now" }).getByText("Sealed", { exact: true }).waitFor();
    assert.deepEqual(problems.errors, []);
  } catch (e) {
    await page.screenshot({ path: results("create-net-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
});
