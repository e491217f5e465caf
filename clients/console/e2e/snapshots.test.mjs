// Snapshots and forks from the page: take a snapshot (its progress shown
// while it runs; then listed, as REST lists it), fork the sandbox (the fork
// reaches RUNNING with the source's files, and its link leads to its
// page), start a new sandbox from the snapshot, delete the snapshot.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { call, cleanUp, consoleUrl, getSandbox, launch, results, skip, until } from "./lib.mjs";
import { getFile, putFile, sh, signedInOn, toast } from "./tools.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

test("take a snapshot, fork the sandbox and start one from the snapshot, then delete it", { skip, timeout: 240_000 }, async () => {
  const marker = `snapshot-e2e-${Date.now().toString(36)}\n`;
  const { t, id, context, page, problems } = await signedInOn(browser, "snapshots", "snapshots", {
    before: async (t, s) => {
      await putFile(t, s.sandboxId, "/workspace/marker.txt", marker);
      // Enough to copy that the copy's progress shows before it ends.
      await sh(t, s.sandboxId, "head -c 512M /dev/zero > /workspace/big && sync");
    },
  });
  try {
    await page.getByRole("heading", { level: 2, name: "Snapshots and forks" }).waitFor();
    await page.getByText("No snapshots of this sandbox yet.").waitFor();

    // A bad name is refused before it is sent.
    const name = page.getByRole("form", { name: "Take a snapshot" }).getByLabel("Name");
    await name.fill("not a name");
    await page.getByRole("button", { name: "Take a snapshot" }).click();
    await page.getByText("A name is 1 to 128 letters, digits, '.', '_' or '-'").waitFor();

    const snapName = `e2e-${Date.now().toString(36)}`;
    await name.fill(snapName);
    // Pending while it runs: the button is busy, and the copy's progress
    // shows as the server streams it (bytes of about how many).
    const busy = page.waitForSelector('button[aria-busy="true"]:has-text("Take a snapshot")');
    const progress = page.getByTestId("snapshot-progress").filter({ hasText: /Copying the files .*: [1-9][\d.]* \w+ of about [\d.]+ \w+/ });
    await page.getByRole("button", { name: "Take a snapshot" }).click();
    await busy;
    await progress.waitFor({ timeout: 30_000 });
    await toast(page, "Snapshot taken").waitFor({ timeout: 60_000 });
    await sh(t, id, "rm /workspace/big");
    const list = page.getByRole("table", { name: "This sandbox's snapshots" });
    await list.getByText(snapName, { exact: true }).waitFor();
    const listed = await call("GET", `/v1/snapshots?sandboxId=${id}`, t.token);
    assert.deepEqual(listed.snapshots.map((s) => s.name), [snapName]);

    // Fork once: the new sandbox runs, with the source's files.
    const fork = page.getByRole("form", { name: "Fork this sandbox" });
    await fork.getByLabel("How many").fill("21");
    await fork.getByRole("button", { name: "Fork" }).click();
    await page.getByText("The count must be 1 to 20").waitFor();
    await fork.getByLabel("How many").fill("1");
    await fork.getByRole("button", { name: "Fork" }).click();
    await page.getByRole("status").filter({ hasText: "Forking: 1 new sandbox" }).waitFor();
    const made = page.getByRole("region", { name: "New sandboxes" });
    const forkLink = made.getByRole("link").first();
    await forkLink.waitFor({ timeout: 120_000 });
    const forkId = (await forkLink.innerText()).trim();
    assert.match(forkId, /^sbx_/);
    assert.notEqual(forkId, id);
    assert.equal((await getSandbox(t, forkId)).state, "SANDBOX_STATE_RUNNING");
    assert.equal((await getFile(t, forkId, "/workspace/marker.txt")).toString(), marker);

    // A new sandbox from the snapshot.
    await list.getByRole("button", { name: `New sandbox from ${snapName}` }).click();
    await toast(page, "Sandbox created").waitFor({ timeout: 60_000 });
    await until(async () => (await made.getByRole("link").count()) === 2, "the second new sandbox");
    const fromId = (await made.getByRole("link").first().innerText()).trim();
    const from = await until(async () => {
      const s = await getSandbox(t, fromId);
      return s.state === "SANDBOX_STATE_RUNNING" && s;
    }, "the sandbox from the snapshot to run", 60_000);
    assert.equal(from.snapshotId, listed.snapshots[0].snapshotId);
    assert.equal((await getFile(t, fromId, "/workspace/marker.txt")).toString(), marker);

    // Delete the snapshot, through its confirmation.
    await list.getByRole("button", { name: `Delete ${snapName}` }).click();
    const del = page.getByRole("dialog", { name: `Delete snapshot ${snapName}?` });
    await del.getByRole("button", { name: "Delete" }).click();
    await del.waitFor({ state: "hidden" });
    await page.getByText("No snapshots of this sandbox yet.").waitFor();
    assert.deepEqual((await call("GET", `/v1/snapshots?sandboxId=${id}`, t.token)).snapshots ?? [], []);

    // The fork's link leads to its page.
    await made.getByRole("link", { name: forkId }).click();
    await page.waitForURL(`${consoleUrl}/sandboxes/${forkId}`);
    await page.getByRole("heading", { level: 1, name: forkId }).waitFor();
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } catch (e) {
    await page.screenshot({ path: results("snapshots-failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
});
