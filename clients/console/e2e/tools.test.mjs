// A viewer on the files, previews, snapshots and network tabs: it sees
// the files (read-only, downloadable), the ports, the snapshots and the
// egress policy, and no control that changes anything; the changes these
// tabs make, forced from its page with its CSRF token, are refused 403.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, cleanUp, consoleUrl, csrfOf, launch, results, skip } from "./lib.mjs";
import { putFile, signedInOn, startServer } from "./tools.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

/** Buttons that change nothing on the server. */
const HARMLESS = new Set(["Skip to content", "Sign out", "Close", "Refresh", "Refresh ports", "Download", "Try again"]);

async function mutatingButtons(page) {
  const names = [];
  for (const b of await page.getByRole("button").all()) {
    // The tree's rows open folders and files: reading only.
    if ((await b.getAttribute("data-path")) !== null) continue;
    const name = ((await b.getAttribute("aria-label")) ?? (await b.innerText())).trim();
    if (!HARMLESS.has(name) && !/theme: change theme$/.test(name) && !/^Dismiss: /.test(name)) {
      names.push(name);
    }
  }
  return names;
}

/** Form controls a person could type into or pick (the file viewer's read-only text aside). */
const editable = (page) => page.locator("input:not([readonly]), select, textarea:not([readonly]), [contenteditable]").count();

test("a viewer sees the files, ports, snapshots and policy, and none of their mutating controls", { skip }, async () => {
  const snapName = `viewer-${Date.now().toString(36)}`;
  const { id, context, page, problems } = await signedInOn(browser, "tools-viewer", "files", {
    role: "ROLE_VIEWER",
    before: async (t, s) => {
      await putFile(t, s.sandboxId, "/workspace/notes.txt", "for viewers\n");
      await startServer(t, s.sandboxId, 8000, "<h1>hi</h1>");
      await call("POST", `/v1/sandboxes/${s.sandboxId}/snapshots`, t.token, { name: snapName });
    },
  });
  try {
    const sections = page.getByRole("navigation", { name: "Sandbox sections" });
    await sections.getByRole("link", { name: "Files" }).waitFor();
    const tabs = await sections.getByRole("link").allInnerTexts();
    for (const name of ["Files", "Previews", "Snapshots", "Network"]) assert.ok(tabs.includes(name), name);

    // Files: browse and read, download; no upload, folder, rename, delete or save.
    const tree = page.getByRole("list", { name: "Files in /workspace" });
    await tree.getByRole("button", { name: /^notes\.txt/ }).click();
    const text = page.getByLabel("Content of notes.txt");
    await text.waitFor();
    assert.equal(await text.inputValue(), "for viewers\n");
    assert.equal(await text.isEditable(), false);
    await page.getByRole("button", { name: "Download" }).waitFor();
    assert.equal(await page.locator('input[type="file"]').count(), 0);
    assert.deepEqual(await mutatingButtons(page), []);
    assert.equal(await editable(page), 0);

    // Previews: the ports, no link.
    await page.goto(`${consoleUrl}/sandboxes/${id}/previews`);
    await page.getByRole("table", { name: "Listening ports" }).getByRole("cell", { name: "8000", exact: true }).waitFor();
    await page.getByText("Your role (viewer) can see the ports but not make links to them.").waitFor();
    assert.deepEqual(await mutatingButtons(page), []);
    assert.equal(await editable(page), 0);

    // Snapshots: the list, no snapshot, fork, create or delete.
    await page.goto(`${consoleUrl}/sandboxes/${id}/snapshots`);
    await page.getByRole("table", { name: "This sandbox's snapshots" }).getByText(snapName, { exact: true }).waitFor();
    assert.equal(await page.getByRole("form").count(), 0);
    assert.deepEqual(await mutatingButtons(page), []);
    assert.equal(await editable(page), 0);

    // Network: the policy, no form.
    await page.goto(`${consoleUrl}/sandboxes/${id}/network`);
    await page.getByRole("region", { name: "Egress now" }).getByText("Allow all", { exact: true }).waitFor();
    assert.equal(await page.getByRole("radio").count(), 0);
    assert.deepEqual(await mutatingButtons(page), []);
    assert.equal(await editable(page), 0);

    // Forced from the page with its token: refused.
    const csrf = await csrfOf(page);
    assert.ok(csrf);
    const forced = await page.evaluate(
      async ({ id, csrf, snapName }) => {
        const send = async (method, path, body, type = "application/json") => {
          const r = await fetch(path, {
            method,
            headers: { "content-type": type, "x-csrf-token": csrf },
            body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : body,
          });
          return { path: `${method} ${path}`, status: r.status, body: await r.text() };
        };
        return [
          await send("PATCH", `/v1/sandboxes/${id}/network-policy`, { mode: "EGRESS_MODE_DENY" }),
          await send("POST", `/v1/sandboxes/${id}/preview-tokens`, { port: 8000 }),
          await send("POST", `/v1/sandboxes/${id}/snapshots`, { name: `${snapName}-2` }),
          await send("POST", `/v1/sandboxes/${id}:fork`, { count: 1 }),
          await send("POST", `/v1/sandboxes/${id}/files:write?path=notes.txt`, "pwned", "application/octet-stream"),
          await send("POST", `/v1/sandboxes/${id}/files:move`, { sourcePath: "notes.txt", destinationPath: "x.txt" }),
          await send("DELETE", `/v1/sandboxes/${id}/files?path=notes.txt`),
        ];
      },
      { id, csrf, snapName },
    );
    for (const f of forced) assert.equal(f.status, 403, `${f.path}: ${f.status} ${f.body}`);
    assert.deepEqual(problems.errors, []);
  } catch (e) {
    await page.screenshot({ path: results("tools-viewer-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
});
