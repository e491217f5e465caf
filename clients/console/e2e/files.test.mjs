// The file browser, as a developer uses it: upload a file through the
// page (a progress bar while it goes), see it in the tree, open it, edit
// and save it, download it (the saved bytes, compared with what REST
// reads in the sandbox), make a folder and upload into it, rename and
// delete (through the confirmation), and the viewer's notes for a binary
// file and one too large to show.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { cleanUp, launch, results, skip, until } from "./lib.mjs";
import { getFile, putFile, signedInOn, toast } from "./tools.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

const tree = (page) => page.getByRole("list", { name: "Files in /workspace" });
/** A row of the tree by its name (a folder's ends in /; a file's is followed by its size). */
const node = (page, name) =>
  tree(page).getByRole("button", { name: new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\s|$)`) });

test("upload, open, edit, save, download, rename and delete files through the page", { skip }, async () => {
  const { t, id, context, page, problems } = await signedInOn(browser, "files", "files");
  try {
    await page.getByRole("heading", { level: 2, name: /^Files/ }).waitFor();
    await page.getByText("The workspace is empty.").waitFor();
    // Whether a progress bar was shown during an upload.
    await page.evaluate(() => {
      window.__progress = 0;
      new MutationObserver(() => {
        if (document.querySelector("progress")) window.__progress += 1;
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });

    // Upload a text file: it is listed, selected and shown.
    const first = "hello from the console\nline two\n";
    await page.locator('input[type="file"]').setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from(first) });
    await toast(page, "Uploaded").waitFor();
    await node(page, "notes.txt").waitFor();
    assert.ok(await page.evaluate(() => window.__progress) > 0, "no progress bar was shown");
    const editor = page.getByLabel("Content of notes.txt");
    await until(async () => (await editor.inputValue()) === first, "the uploaded text in the viewer");
    assert.deepEqual(await getFile(t, id, "/workspace/notes.txt"), Buffer.from(first));

    // Edit and save: REST reads the new bytes in the sandbox.
    const edited = `${first}an edit made in the browser: é ✓\n`;
    await editor.fill(edited);
    await page.getByRole("status").filter({ hasText: "Unsaved changes" }).waitFor();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await toast(page, "Saved").waitFor();
    await page.getByRole("status").filter({ hasText: /^Saved$/ }).waitFor();
    assert.equal((await getFile(t, id, "/workspace/notes.txt")).toString("utf8"), edited);

    // Download: a file save whose bytes are what was saved.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("group", { name: "File actions" }).getByRole("button", { name: "Download" }).click(),
    ]);
    assert.equal(download.suggestedFilename(), "notes.txt");
    const saved = results("downloaded-notes.txt");
    await download.saveAs(saved);
    assert.deepEqual(await readFile(saved), Buffer.from(edited, "utf8"));

    // A folder, and an upload into it (the selected folder is the target).
    await page.getByRole("button", { name: "New folder" }).click();
    const mk = page.getByRole("dialog", { name: "New folder" });
    await mk.getByLabel("Folder name").fill("a/b");
    await mk.getByRole("button", { name: "Make folder" }).click();
    await mk.getByText("A name cannot hold a /").waitFor();
    await mk.getByLabel("Folder name").fill("docs");
    await mk.getByRole("button", { name: "Make folder" }).click();
    await mk.waitFor({ state: "hidden" });
    await node(page, "docs/").click();
    assert.equal(await node(page, "docs/").getAttribute("aria-expanded"), "true");
    await page.getByText("New folders and uploads go into /workspace/docs.").waitFor();
    await page.locator('input[type="file"]').setInputFiles({ name: "inner.md", mimeType: "text/markdown", buffer: Buffer.from("# inner\n") });
    await node(page, "inner.md").waitFor();
    assert.equal((await getFile(t, id, "/workspace/docs/inner.md")).toString(), "# inner\n");
    // The keyboard: Left closes the folder from its row.
    await node(page, "docs/").focus();
    await page.keyboard.press("ArrowLeft");
    await node(page, "inner.md").waitFor({ state: "detached" });
    await page.keyboard.press("ArrowRight");
    await node(page, "inner.md").waitFor();

    // Binary and too large: said, not shown.
    const binary = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0xff]);
    await putFile(t, id, "/workspace/tool.bin", binary);
    const big = Buffer.alloc(1024 * 1024 + 10, 0x61);
    await putFile(t, id, "/workspace/big.txt", big);
    await page.getByRole("button", { name: "Refresh" }).click();
    await node(page, "tool.bin").click();
    await page.getByText("A binary file (not UTF-8 text): download it to open it.").waitFor();
    await node(page, "big.txt").click();
    await page.getByText(/Too large to show here \(1 MiB; the viewer shows up to 1 MiB\)/).waitFor();
    assert.equal(await page.locator("textarea").count(), 0);

    // Rename: the tree and the sandbox follow.
    await node(page, "notes.txt").click();
    await page.getByRole("group", { name: "File actions" }).getByRole("button", { name: "Rename" }).click();
    const rn = page.getByRole("dialog", { name: "Rename notes.txt" });
    await rn.getByLabel("New name").fill("renamed.txt");
    await rn.getByRole("button", { name: "Rename" }).click();
    await rn.waitFor({ state: "hidden" });
    await node(page, "renamed.txt").waitFor();
    assert.equal(await node(page, "notes.txt").count(), 0);
    assert.equal(await getFile(t, id, "/workspace/notes.txt"), null);
    assert.equal((await getFile(t, id, "/workspace/renamed.txt")).toString("utf8"), edited);

    // Delete asks first (Cancel keeps it), then deletes.
    await page.getByRole("group", { name: "File actions" }).getByRole("button", { name: "Delete" }).click();
    const del = page.getByRole("dialog", { name: "Delete renamed.txt?" });
    await del.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Cancel");
    await del.getByRole("button", { name: "Cancel" }).click();
    await del.waitFor({ state: "hidden" });
    assert.ok(await getFile(t, id, "/workspace/renamed.txt"));
    await page.getByRole("group", { name: "File actions" }).getByRole("button", { name: "Delete" }).click();
    await del.getByRole("button", { name: "Delete" }).click();
    await del.waitFor({ state: "hidden" });
    await node(page, "renamed.txt").waitFor({ state: "detached" });
    assert.equal(await getFile(t, id, "/workspace/renamed.txt"), null);

    // A refused change is a readable message: a folder that exists.
    await node(page, "docs/").click();
    await node(page, "docs/").click();
    await page.getByRole("button", { name: "New folder" }).click();
    await mk.getByLabel("Folder name").fill("inner.md");
    await mk.getByRole("button", { name: "Make folder" }).click();
    await mk.getByRole("alert").waitFor();
    assert.match(await mk.getByRole("alert").innerText(), /\S+\. \S/);
    await page.keyboard.press("Escape");
    await mk.waitFor({ state: "hidden" });
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } catch (e) {
    await page.screenshot({ path: results("files-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
});
