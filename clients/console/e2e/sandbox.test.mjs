// A developer's day in the console: create a sandbox through the dialog
// (the list follows it from the event stream), run a command on its page,
// type in its terminal, and pause, resume, stop, start and delete it
// through the confirmation dialogs while another tab's list follows live.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  addUser,
  cleanUp,
  consoleUrl,
  getSandbox,
  launch,
  listSandboxes,
  listedIds,
  makeSandbox,
  makeTenant,
  markDocument,
  newSession,
  notReloaded,
  row,
  signIn,
  skip,
  until,
  watchPage,
} from "./lib.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

/** A developer of a new tenant, signed in; `watcher` is a second tab on the list. */
async function developer(label) {
  const t = await makeTenant(label);
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const s = await newSession(browser);
  await signIn(s.page, dev);
  return { t, dev, ...s };
}

/**
 * A second tab of the same browser on the list (the shared cookie; no
 * token). The first tab is brought back to the front: Chromium throttles
 * animation frames in a background tab.
 */
async function watcherTab(context, query = "") {
  const front = context.pages()[0];
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${consoleUrl}/sandboxes${query}`);
  await page.getByText("Live", { exact: true }).waitFor();
  await markDocument(page);
  await front.bringToFront();
  return { page, problems };
}

const badge = (scope, text) => scope.locator(".badge", { hasText: new RegExp(`^${text}$`) });

test("create a sandbox through the dialog: it appears in the list and reaches RUNNING live", { skip }, async () => {
  const { t, context, page, problems } = await developer("create");
  try {
    await page.getByText("No sandboxes yet").waitFor();
    const watcher = await watcherTab(context);
    // Which states the watching tab showed for the new sandbox, as they came.
    await watcher.page.evaluate(() => {
      window.__seen = [];
      new MutationObserver(() => {
        for (const r of document.querySelectorAll('[role="rowgroup"] [role="row"]')) {
          const state = r.querySelector(".badge")?.textContent ?? "";
          const last = window.__seen[window.__seen.length - 1];
          if (last !== state) window.__seen.push(state);
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await markDocument(page);

    await page.getByRole("button", { name: "New sandbox" }).click();
    const dialog = page.getByRole("dialog", { name: "New sandbox" });
    await dialog.waitFor();
    // The image field has the focus first.
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("list")), "create-images");

    // The form is checked before it is sent.
    await dialog.getByLabel("CPU (millis)", { exact: true }).fill("lots");
    await dialog.getByRole("button", { name: "Create" }).click();
    const cpu = dialog.getByLabel("CPU (millis)", { exact: true });
    assert.equal(await cpu.getAttribute("aria-invalid"), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.closest(".field")?.querySelector("label")?.textContent), "CPU (millis)");
    assert.equal((await listSandboxes(t)).length, 0, "an invalid form was sent");

    await cpu.fill("250");
    await dialog.getByLabel("Memory (MiB)", { exact: true }).fill("256");
    // What the server refuses is shown in the dialog, which stays open.
    const image = dialog.getByLabel("Image", { exact: true });
    await image.fill("no-such-image-e2e");
    await dialog.getByRole("button", { name: "Create" }).click();
    const refused = dialog.getByRole("alert");
    await refused.waitFor();
    assert.match(await refused.innerText(), /^Not found\. image "no-such-image-e2e" .*not found/);
    assert.equal((await listSandboxes(t)).length, 0);
    await image.fill("");
    await dialog.getByLabel("Timeout (seconds)", { exact: true }).fill("600");
    // A metadata pair and a label, for the filters below.
    const meta = dialog.getByRole("group", { name: "Metadata" });
    await meta.getByRole("button", { name: "Add key" }).click();
    await meta.getByLabel("Key 1", { exact: true }).fill("purpose");
    await meta.getByLabel("Value 1", { exact: true }).fill("console-e2e");
    const labels = dialog.getByRole("group", { name: "Labels" });
    await labels.getByRole("button", { name: "Add label" }).click();
    await labels.getByLabel("Label 1", { exact: true }).fill("team");
    await labels.getByLabel("Value 1", { exact: true }).fill("qa");
    const created = page.waitForResponse((r) => r.url().endsWith("/v1/sandboxes") && r.request().method() === "POST");
    // A double click makes one sandbox.
    await dialog.getByRole("button", { name: "Create" }).dblclick();
    const resp = await created;
    assert.equal(resp.status(), 200, await resp.text());
    const id = (await resp.json()).sandbox.sandboxId;
    assert.match(id, /^sbx_/);

    // The dialog closes on its page; a notification says so.
    await page.waitForURL(`${consoleUrl}/sandboxes/${id}`);
    await page.getByRole("heading", { level: 1, name: id }).waitFor();
    assert.equal(await dialog.isVisible(), false);
    await page.getByText("Sandbox created").first().waitFor();

    // The other tab's list got it from the event stream, then RUNNING.
    await row(watcher.page, id).waitFor();
    await badge(row(watcher.page, id), "Running").waitFor();
    await notReloaded(watcher.page);
    const seen = await watcher.page.evaluate(() => window.__seen);
    assert.equal(seen[seen.length - 1], "Running", JSON.stringify(seen));
    // Its own page follows too.
    await badge(page.locator(".head"), "Running").waitFor();
    assert.deepEqual((await listSandboxes(t)).map((x) => x.sandboxId), [id]);
    const s = await getSandbox(t, id);
    assert.equal(s.resources.cpuMillis, "250");
    assert.equal(s.resources.memoryMib, "256");
    assert.equal(s.timeout, "600s");
    assert.deepEqual(s.metadata, { purpose: "console-e2e" });
    assert.deepEqual(s.labels, { team: "qa" });

    // Back to the list without a reload: there, running.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Sandboxes" }).click();
    await page.waitForURL(`${consoleUrl}/sandboxes`);
    await badge(row(page, id), "Running").waitFor();
    await notReloaded(page);

    // Filters: by state, label and metadata (kept in the address).
    const other = await makeSandbox(t);
    await row(page, other.sandboxId).waitFor();
    assert.equal((await listedIds(page)).length, 2);
    await page.getByLabel("Labels", { exact: true }).fill("team=qa");
    await page.getByRole("button", { name: "Apply" }).click();
    await until(async () => (await listedIds(page)).join() === id, "the label filter");
    assert.match(page.url(), /team%3Dqa|team=qa/);
    await page.getByRole("button", { name: "Clear filters" }).click();
    await until(async () => (await listedIds(page)).length === 2, "the cleared filter");
    await page.getByLabel("Metadata key", { exact: true }).fill("purpose");
    await page.getByLabel("Metadata value", { exact: true }).fill("console-e2e");
    await page.getByRole("button", { name: "Apply" }).click();
    await until(async () => (await listedIds(page)).join() === id, "the metadata filter");
    await page.getByRole("list", { name: "Metadata filters" }).getByText("purpose=console-e2e").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.getByLabel("State", { exact: true }).selectOption("SANDBOX_STATE_PAUSED");
    await page.getByText("No sandbox matches these filters").waitFor();
    assert.deepEqual(await listedIds(page), []);
    await page.getByLabel("State", { exact: true }).selectOption("SANDBOX_STATE_RUNNING");
    await until(async () => (await listedIds(page)).length === 2, "the running filter");
    // A filtered link opens filtered.
    await page.reload();
    await until(async () => (await listedIds(page)).length === 2, "the filter read from the address");
    assert.equal(await page.getByLabel("State", { exact: true }).inputValue(), "SANDBOX_STATE_RUNNING");

    assert.deepEqual(problems.errors, []);
    assert.deepEqual(watcher.problems.errors, []);
  } finally {
    await context.close();
  }
});

test("run a command on a sandbox's page: its output and exit code", { skip }, async () => {
  const { t, context, page, problems } = await developer("run");
  try {
    const sbx = await makeSandbox(t);
    await row(page, sbx.sandboxId).getByRole("link").click();
    await page.waitForURL(`${consoleUrl}/sandboxes/${sbx.sandboxId}`);
    await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Run a command" }).click();
    await page.waitForURL(`${consoleUrl}/sandboxes/${sbx.sandboxId}/run`);

    // An empty command is refused in the form.
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByText("Enter a command.").waitFor();

    await page.getByLabel("Command", { exact: true }).fill("echo hello-$((3+4)); echo to-stderr >&2; printf 'ünï\\n'; exit 3");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const status = page.getByRole("status").filter({ hasText: "Finished" });
    await status.waitFor();
    assert.match(await status.innerText(), /Finished: exit code 3 \(pid \d+\)/);
    const log = page.getByRole("log", { name: "Output" });
    const text = await log.innerText();
    assert.match(text, /^hello-7$/m);
    assert.match(text, /^to-stderr$/m);
    assert.match(text, /^ünï$/m);
    assert.equal(await log.locator(".stderr").innerText(), "to-stderr\n");

    // A second run replaces the output; a signal is reported as such.
    await page.getByLabel("Command", { exact: true }).fill("echo second; kill -9 $$");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "killed by signal 9" }).waitFor();
    assert.equal((await log.innerText()).trim(), "second");
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

/** The text of xterm's buffer, line by line. */
const termLines = (page) =>
  page.evaluate(() => [...document.querySelectorAll(".xterm-rows > div")].map((d) => d.textContent.replace(/\s+$/, "")));

test("the terminal: echo $((6*7)) shows 42", { skip }, async () => {
  const { t, context, page, problems } = await developer("term");
  try {
    const sbx = await makeSandbox(t);
    await page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}/terminal`);
    const status = page.getByRole("status").filter({ hasText: /Connected \(pid \d+\)/ });
    await status.waitFor();
    await page.locator(".xterm").click();
    // The shell's prompt first, so the keys reach a reading shell.
    await until(async () => (await termLines(page)).some((l) => l.trim() !== ""), "a prompt");
    await page.keyboard.type("echo $((6*7))");
    await page.keyboard.press("Enter");
    const lines = await until(async () => {
      const l = await termLines(page);
      return l.some((x) => x.trim() === "42") && l;
    }, "42 in the terminal");
    assert.ok(lines.some((l) => l.includes("echo $((6*7))")), lines.join("\n"));

    // The size follows the window: a narrower window, fewer columns in the shell.
    await page.keyboard.type("stty size");
    await page.keyboard.press("Enter");
    const before = await until(async () => (await termLines(page)).find((l) => /^\d+ \d+$/.test(l.trim())), "stty size");
    await page.setViewportSize({ width: 800, height: 700 });
    await page.waitForTimeout(300);
    await page.keyboard.type("clear; stty size");
    await page.keyboard.press("Enter");
    const after = await until(async () => {
      const l = (await termLines(page)).find((x) => /^\d+ \d+$/.test(x.trim()));
      return l && l !== before && l;
    }, "a new stty size");
    const cols = (l) => Number(l.trim().split(" ")[1]);
    assert.ok(cols(after) < cols(before), `${before} then ${after}`);

    // exit ends the shell; the page says so and offers a new one.
    await page.keyboard.type("exit 5");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "The shell ended: exit code 5" }).waitFor();
    await page.getByRole("button", { name: "New shell" }).click();
    await status.waitFor();
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } finally {
    await context.close();
  }
});

test("pause, resume, stop, start and delete through the confirmation dialogs; the list follows live", { skip }, async () => {
  const { t, context, page, problems } = await developer("life");
  try {
    const sbx = await makeSandbox(t);
    const id = sbx.sandboxId;
    const keep = await makeSandbox(t);
    const watcher = await watcherTab(context);
    await badge(row(watcher.page, id), "Running").waitFor();
    await page.goto(`${consoleUrl}/sandboxes/${id}`);
    const head = page.locator(".head");
    await badge(head, "Running").waitFor();
    const actions = page.getByRole("group", { name: "Actions" });
    assert.deepEqual(await actions.getByRole("button").allInnerTexts(), ["Pause", "Stop", "Delete"]);

    /** Clicks an action, checks its dialog, confirms; waits for the state everywhere. */
    async function act(label, state, apiState) {
      await actions.getByRole("button", { name: label, exact: true }).click();
      const dialog = page.getByRole("dialog", { name: `${label} ${id}?` });
      await dialog.waitFor();
      await dialog.getByRole("button", { name: label, exact: true }).click();
      await dialog.waitFor({ state: "hidden" });
      await badge(head, state).waitFor();
      await badge(row(watcher.page, id), state).waitFor();
      assert.equal((await getSandbox(t, id)).state, apiState);
    }

    // Cancel changes nothing.
    await actions.getByRole("button", { name: "Pause", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: `Pause ${id}?` });
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /frozen with their memory kept/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    assert.equal((await getSandbox(t, id)).state, "SANDBOX_STATE_RUNNING");
    // Escape closes a dialog too, and the focus goes back to the button.
    await actions.getByRole("button", { name: "Pause", exact: true }).click();
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Pause");
    assert.equal((await getSandbox(t, id)).state, "SANDBOX_STATE_RUNNING");

    await act("Pause", "Paused", "SANDBOX_STATE_PAUSED");
    assert.deepEqual(await actions.getByRole("button").allInnerTexts(), ["Resume", "Stop", "Delete"]);
    await act("Resume", "Running", "SANDBOX_STATE_RUNNING");
    await act("Stop", "Stopped", "SANDBOX_STATE_STOPPED");
    assert.deepEqual(await actions.getByRole("button").allInnerTexts(), ["Start", "Delete"]);
    await act("Start", "Running", "SANDBOX_STATE_RUNNING");

    // Delete is dangerous: Cancel has the focus.
    await actions.getByRole("button", { name: "Delete", exact: true }).click();
    const del = page.getByRole("dialog", { name: `Delete ${id}?` });
    await del.waitFor();
    assert.match(await del.innerText(), /cannot be undone/);
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Cancel");
    await del.getByRole("button", { name: "Delete", exact: true }).click();
    await page.waitForURL(`${consoleUrl}/sandboxes`);
    await row(watcher.page, id).waitFor({ state: "detached" });
    // This tab's list (read anew) has the other sandbox only.
    await until(async () => (await listedIds(page)).join() === keep.sandboxId, "the list without the deleted sandbox");
    assert.deepEqual(await listedIds(watcher.page), [keep.sandboxId]);
    assert.equal((await getSandbox(t, id)).state, "SANDBOX_STATE_DELETED");
    await notReloaded(watcher.page);
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(watcher.problems.errors, []);
  } finally {
    await context.close();
  }
});
