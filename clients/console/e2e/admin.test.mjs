// The platform-admin pages, as an admin uses them: a second worker is
// started for the test; the admin drains it and undrains it through the
// workers page, and moves a stopped sandbox onto it through the move
// dialog (which lists only the workers that may take it); REST confirms
// each change. The audit page then shows those actions, its filters (in
// the address) narrowing to them. Once stopped and holding nothing, the
// worker is forgotten from the workers page (a connected one is refused),
// so the platform is left as the test found it. Needs a second worker: TALON_BIN,
// TALON_GRPC_URL, TALON_DATA_DIR (see lib.mjs, workerSkip).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  adminKey,
  call,
  consoleUrl,
  launch,
  mainNav,
  makePlatformAdmin,
  makeTenant,
  newSession,
  removeUser,
  rest,
  results,
  signIn,
  skip as noTalon,
  startWorker,
  unique,
  stopWorker,
  until,
  workerSkip,
  workers,
} from "./lib.mjs";

let browser;
let admin;
let worker;
let sandbox;
const skip = workerSkip;

before(async () => {
  if (noTalon) return;
  browser = await launch();
  admin = await makePlatformAdmin();
});

let forgotten = false;
/** Another tenant's sandbox, moved from the worker's list: { tenant, sandboxId }. */
let foreign;

/** Deletes the moved sandbox (so the worker holds nothing) and waits for it to go. */
async function deleteMoved() {
  if (foreign && !foreign.deleted) {
    await rest("DELETE", `/v1/sandboxes/${foreign.sandboxId}`, foreign.tenant.token);
    await until(async () => {
      const r = await rest("GET", `/v1/sandboxes/${foreign.sandboxId}`, foreign.tenant.token);
      return r.status === 404 || r.body?.sandbox?.state === "SANDBOX_STATE_DELETED";
    }, "the other tenant's sandbox to be deleted", 60_000);
    foreign.deleted = true;
  }
  if (!sandbox || sandbox.deleted) return;
  await rest("DELETE", `/v1/sandboxes/${sandbox.sandboxId}`, adminKey);
  await until(async () => {
    const r = await rest("GET", `/v1/sandboxes/${sandbox.sandboxId}`, adminKey);
    return r.status === 404 || r.body?.sandbox?.state === "SANDBOX_STATE_DELETED";
  }, "the moved sandbox to be deleted", 60_000);
  sandbox.deleted = true;
}

after(async () => {
  await browser?.close();
  // The moved sandbox goes first (so the worker holds nothing), then the worker (stopped, then forgotten) and the user.
  await deleteMoved().catch((e) => console.error(e.message));
  if (worker) await stopWorker(worker);
  if (worker && !forgotten) {
    await until(async () => (await rest("DELETE", `/v1/admin/workers/${worker.id}`, adminKey)).status !== 400, "the worker's lease to lapse", 90_000)
      .catch((e) => console.error(`forgetting ${worker.id}: ${e.message}`));
  }
  if (admin) await removeUser(admin);
});

const getSbx = async (id) => (await call("GET", `/v1/sandboxes/${id}`, adminKey)).sandbox;

test("an admin drains and undrains a worker, and moves a sandbox to it", { skip }, async () => {
  // A stopped sandbox of the admin's own tenant (so the dialog can read where it is), on the first worker.
  const made = await call("POST", "/v1/sandboxes?waitUntilRunning=true", adminKey, { resources: { cpuMillis: 250, memoryMib: 256 } });
  sandbox = made.sandbox;
  await call("POST", `/v1/sandboxes/${sandbox.sandboxId}:stop`, adminKey, {});
  await until(async () => (await getSbx(sandbox.sandboxId)).state === "SANDBOX_STATE_STOPPED", "the sandbox to stop", 60_000);
  const from = sandbox.workerId;
  worker = await startWorker();
  assert.notEqual(worker.id, from);

  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, admin);
    const nav = await mainNav(page);
    assert.ok(nav.includes("Admin") && nav.includes("Tenant"), nav.join());
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }).click();
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: worker.id });
    await row.getByText("Active", { exact: true }).waitFor();

    // Drain, through the confirmation.
    await row.getByRole("button", { name: `Drain ${worker.id}` }).click();
    const drain = page.getByRole("dialog", { name: new RegExp(`^Drain .*${worker.id}`) });
    await drain.getByRole("button", { name: "Drain" }).click();
    await drain.waitFor({ state: "hidden" });
    await row.getByText("Draining", { exact: true }).waitFor();
    assert.equal((await workers()).find((w) => w.workerId === worker.id).state, "WORKER_STATE_DRAINING");
    await page.screenshot({ path: results("admin-workers-draining.png"), fullPage: true });

    // Undrain.
    await row.getByRole("button", { name: `Undrain ${worker.id}` }).click();
    const undrain = page.getByRole("dialog", { name: new RegExp(`^Undrain .*${worker.id}`) });
    await undrain.getByRole("button", { name: "Undrain" }).click();
    await undrain.waitFor({ state: "hidden" });
    await row.getByText("Active", { exact: true }).waitFor();
    assert.equal((await workers()).find((w) => w.workerId === worker.id).state, "WORKER_STATE_ACTIVE");

    // Move the sandbox: the dialog offers the new worker, not the one that holds it.
    await page.getByLabel("Sandbox id").fill(sandbox.sandboxId);
    await page.getByRole("button", { name: "Choose a worker…" }).click();
    const move = page.getByRole("dialog", { name: `Move ${sandbox.sandboxId}` });
    await move.getByText("Any sandbox but a deleted one can be moved", { exact: false }).waitFor();
    await move.getByText("Stopped", { exact: true }).waitFor();
    const radios = move.getByRole("radio");
    const names = await radios.evaluateAll((els) => els.map((e) => e.closest("label").innerText));
    assert.equal(names.length, 2, names.join(" | "));
    assert.ok(names[1].includes(worker.id), names.join(" | "));
    assert.ok(!names.some((n) => n.includes(from)), `the current worker was offered: ${names.join(" | ")}`);
    await move.getByText("Workers that cannot take it").click();
    await move.getByRole("listitem").filter({ hasText: from }).getByText("holds it now", { exact: false }).waitFor();
    await page.screenshot({ path: results("admin-move-dialog.png") });
    await move.getByRole("radio", { name: new RegExp(worker.id) }).check();
    await move.getByRole("button", { name: "Move", exact: true }).click();
    await move.getByRole("status").filter({ hasText: `Moved: it is starting on ${worker.id}` }).waitFor();
    await move.getByRole("button", { name: "Done" }).click();

    // REST: its worker changed, at a new generation, and it runs there.
    const moved = await getSbx(sandbox.sandboxId);
    assert.equal(moved.workerId, worker.id);
    assert.ok(Number(moved.generation) > Number(sandbox.generation));
    assert.match(moved.stateMessage, new RegExp(`reassigned from ${from}`));
    await until(async () => (await getSbx(sandbox.sandboxId)).state === "SANDBOX_STATE_RUNNING", "the moved sandbox to run", 60_000);

    // The move is in the failover history, from where to where and why,
    // and in the audit log's records.
    const hist = page.getByRole("table", { name: "Failover history" }).getByRole("row").filter({ hasText: sandbox.sandboxId }).first();
    await hist.waitFor();
    const cells = await hist.getByRole("cell").allInnerTexts();
    assert.equal(cells[2].trim(), from);
    assert.equal(cells[3].trim(), worker.id);
    assert.equal(cells[4].trim(), "Moved by hand");
    assert.equal(cells[5].trim(), String(moved.generation));
    await page
      .getByRole("table", { name: "Audit records of moves and failover" })
      .getByRole("row")
      .filter({ hasText: sandbox.sandboxId })
      .getByText("AdminService.ReassignSandbox")
      .waitFor();
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("a worker's row lists its sandboxes of every tenant; one is moved from there", { skip }, async () => {
  assert.ok(worker, "the first test did not start the second worker");
  // A stopped sandbox of another tenant: GetSandbox would not show it to the admin.
  const t = await makeTenant("foreign");
  const made = await call("POST", "/v1/sandboxes?waitUntilRunning=true", t.token, { resources: { cpuMillis: 250, memoryMib: 256 } });
  foreign = { tenant: t, sandboxId: made.sandbox.sandboxId };
  await call("POST", `/v1/sandboxes/${foreign.sandboxId}:stop`, t.token, {});
  const state = async () => (await call("GET", `/v1/sandboxes/${foreign.sandboxId}`, t.token)).sandbox;
  await until(async () => (await state()).state === "SANDBOX_STATE_STOPPED", "the sandbox to stop", 60_000);
  const from = made.sandbox.workerId;
  // The scheduler may have put it on either worker: it moves to the other.
  const target =
    from === worker.id ? (await workers()).find((w) => w.workerId !== worker.id && w.state === "WORKER_STATE_ACTIVE").workerId : worker.id;
  // The REST view: its tenant, state and size, none of what it holds.
  const listed = (await call("GET", `/v1/admin/workers/${from}/sandboxes?pageSize=500`, adminKey)).sandboxes;
  const mine = listed.find((x) => x.sandboxId === foreign.sandboxId);
  assert.equal(mine?.tenantId, t.tenantId);
  assert.equal(mine.state, "SANDBOX_STATE_STOPPED");
  assert.ok(!("env" in mine) && !("metadata" in mine) && !("labels" in mine), JSON.stringify(mine));
  assert.equal((await rest("GET", `/v1/admin/workers/${from}/sandboxes`, t.token)).status, 403);

  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, admin);
    await page.goto(`${consoleUrl}/admin/workers`);
    await page.getByRole("button", { name: `Sandboxes on ${from}` }).click();
    const list = page.getByRole("table", { name: `Sandboxes on ${from}` });
    const line = list.getByRole("row").filter({ hasText: foreign.sandboxId });
    await line.getByText(t.tenantId).waitFor();
    await line.getByRole("button", { name: `Move ${foreign.sandboxId}` }).click();
    const move = page.getByRole("dialog", { name: `Move ${foreign.sandboxId}` });
    await move.getByText(`of tenant ${t.tenantId}`, { exact: false }).waitFor();
    await move.getByRole("radio", { name: new RegExp(target) }).check();
    await move.getByRole("button", { name: "Move", exact: true }).click();
    await move.getByRole("status").filter({ hasText: `Moved: it is starting on ${target}` }).waitFor();
    await page.screenshot({ path: results("admin-worker-sandboxes.png"), fullPage: true });
    await move.getByRole("button", { name: "Done" }).click();
    assert.equal((await state()).workerId, target);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("the audit page shows the drain and the move, its filters narrowing to them", { skip }, async () => {
  assert.ok(worker && sandbox, "the first test did not get as far as the move");
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, admin);
    await page.goto(`${consoleUrl}/admin/audit`);
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    const table = page.getByRole("table", { name: "Audit records" });
    const rows = table.locator("tbody tr");

    // Drains and undrains of the test's worker: two records, both OK.
    await page.getByLabel("Method").fill("/talon.v1.AdminService/DrainWorker");
    await page.getByLabel("Resource id").fill(worker.id);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(new RegExp(`method=%2Ftalon\\.v1\\.AdminService%2FDrainWorker&resource=${worker.id}`));
    await until(async () => (await rows.count()) === 2 && (await rows.first().innerText()).includes(worker.id), "two drain records");
    for (const r of await rows.all()) {
      const text = await r.innerText();
      assert.match(text, /AdminService\.DrainWorker/);
      assert.match(text, /\bOK\b/);
      assert.ok(text.includes(admin.userId), text);
    }
    // Kept in the address: a reload shows the same.
    await page.reload();
    await until(async () => (await rows.count()) === 2 && (await rows.first().innerText()).includes(worker.id), "the filters after a reload");
    assert.equal(await page.getByLabel("Method").inputValue(), "/talon.v1.AdminService/DrainWorker");

    // The move of the sandbox: one record.
    await page.getByLabel("Method").fill("/talon.v1.AdminService/ReassignSandbox");
    await page.getByLabel("Resource id").fill(sandbox.sandboxId);
    await page.getByRole("button", { name: "Apply" }).click();
    await until(async () => (await rows.count()) === 1 && (await rows.first().innerText()).includes(sandbox.sandboxId), "the move record");
    assert.match(await rows.first().innerText(), /AdminService\.ReassignSandbox/);
    await page.screenshot({ path: results("admin-audit-filtered.png"), fullPage: true });

    // A time range after now: nothing.
    const later = new Date(Date.now() + 3_600_000);
    const pad = (n) => String(n).padStart(2, "0");
    const local = `${later.getFullYear()}-${pad(later.getMonth() + 1)}-${pad(later.getDate())}T${pad(later.getHours())}:${pad(later.getMinutes())}`;
    await page.getByLabel("From").fill(local);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/from=/);
    await table.getByText("No record matches these filters.").waitFor();

    // Cleared: every record, newest first, and paging goes forward and back.
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL(`${consoleUrl}/admin/audit`);
    await until(async () => (await rows.count()) > 2, "the whole log");
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("an admin forgets the stopped worker; a connected one is refused", { skip }, async () => {
  assert.ok(worker && sandbox, "the first test did not get as far as the move");
  // A connected worker: refused with the reason (FAILED_PRECONDITION is HTTP 400).
  const live = (await workers()).find((w) => w.workerId !== worker.id && w.state === "WORKER_STATE_ACTIVE");
  const refused = await rest("DELETE", `/v1/admin/workers/${live.workerId}`, adminKey);
  assert.equal(refused.status, 400, JSON.stringify(refused.body));
  assert.match(refused.body.message, /connected/);
  await deleteMoved();
  await stopWorker(worker);
  // Offline, its lease holds a while (it may be running out of reach): refused until it is lost.
  await until(async () => (await workers()).find((w) => w.workerId === worker.id)?.state !== "WORKER_STATE_ACTIVE", "the worker to be offline");
  const early = await rest("DELETE", `/v1/admin/workers/${worker.id}`, adminKey);
  if (early.status === 400) assert.match(early.body.message, /lease holds/);
  else assert.fail(`forgotten while its lease held: ${early.status} ${JSON.stringify(early.body)}`);
  await until(async () => (await workers()).find((w) => w.workerId === worker.id)?.state === "WORKER_STATE_LOST", "the worker to be lost", 90_000);
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, admin);
    await page.goto(`${consoleUrl}/admin/workers`);
    const row = page.getByRole("table", { name: "Workers" }).getByRole("row").filter({ hasText: worker.id });
    await row.getByRole("button", { name: `Forget ${worker.id}` }).click();
    const dialog = page.getByRole("dialog", { name: new RegExp(`^Forget .*${worker.id}`) });
    await dialog.getByRole("button", { name: "Forget" }).click();
    await dialog.waitFor({ state: "hidden" });
    await row.waitFor({ state: "detached" });
    forgotten = true;
    assert.ok(!(await workers()).some((w) => w.workerId === worker.id), "still listed");
    // The servers of the control plane: this one, live, holding the duties.
    const servers = page.getByRole("table", { name: "Servers" });
    await servers.getByText("(answered this page)").waitFor();
    await servers.getByText("Holds the duties").waitFor();
    await page.screenshot({ path: results("admin-workers-forgotten.png"), fullPage: true });
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("the metrics page charts the platform's figures, as the API answers them", { skip: noTalon }, async () => {
  // The API: the answering server's families and the counts by state. A
  // call is counted once it is answered: the second sees the first.
  await call("GET", "/v1/admin/metrics", adminKey);
  const m = await call("GET", "/v1/admin/metrics", adminKey);
  assert.ok(m.serverId, JSON.stringify(m).slice(0, 200));
  const rpc = m.families.find((f) => f.name === "talon_rpc_requests_total");
  assert.equal(rpc?.kind, "METRIC_KIND_COUNTER");
  assert.ok(rpc.samples.some((s) => s.labels.method === "/talon.v1.AdminService/GetPlatformMetrics"), "an earlier call is not counted");
  assert.ok(Number(m.workersByState.WORKER_STATE_ACTIVE) >= 1, JSON.stringify(m.workersByState));
  // A developer is refused it.
  const t = await makeTenant("metrics");
  assert.equal((await rest("GET", "/v1/admin/metrics", t.token)).status, 403);
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, admin);
    await page.goto(`${consoleUrl}/admin/metrics`);
    await page.getByRole("heading", { level: 1, name: "Platform metrics" }).waitFor();
    const workersNow = page.getByRole("region", { name: "Workers now" });
    await workersNow.getByText("Active", { exact: false }).first().waitFor();
    // The second sample (5 s on) makes the rates: the page's own calls are among the methods.
    const top = page.getByRole("table", { name: /methods called most/ });
    await top.getByRole("row").filter({ hasText: "AdminService/GetPlatformMetrics" }).waitFor({ timeout: 20_000 });
    const rpcChart = page.getByRole("img", { name: /^RPCs per second over the last \d+ samples/ });
    await until(async () => !/now —/.test((await rpcChart.getAttribute("aria-label")) ?? ""), "an RPC rate");
    await page.screenshot({ path: results("admin-metrics.png"), fullPage: true });
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("an admin creates a tenant, opens it, and changes its quota", { skip: noTalon }, async () => {
  const { context, page, problems } = await newSession(browser);
  const name = unique("made").toLowerCase();
  try {
    await signIn(page, admin);
    await page.goto(`${consoleUrl}/admin/tenants`);
    await page.getByRole("heading", { level: 1, name: "Tenants" }).waitFor();
    await page.getByRole("button", { name: "New tenant" }).click();
    const dialog = page.getByRole("dialog", { name: "New tenant" });
    await dialog.getByLabel("Name").fill("Not A Name");
    await dialog.getByLabel("Owner email").fill(`${name}@console-e2e.test`);
    await dialog.getByLabel("Owner password").fill("an-owner-password-1");
    await dialog.getByRole("button", { name: "Create tenant" }).click();
    await dialog.getByText("1 to 63 of a-z, 0-9 and -", { exact: false }).waitFor();
    await dialog.getByLabel("Name").fill(name);
    await dialog.getByRole("button", { name: "Create tenant" }).click();
    await page.getByRole("heading", { level: 1, name }).waitFor();
    const tenantId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop());
    await page.getByRole("row").filter({ hasText: `${name}@console-e2e.test` }).getByText("Owner", { exact: true }).waitFor();

    await page.getByRole("button", { name: "Edit quota" }).click();
    const quota = page.getByRole("dialog", { name: `Quota of ${name}` });
    await quota.getByLabel("Sandboxes").fill("-3");
    await quota.getByRole("button", { name: "Save quota" }).click();
    await quota.getByText("A whole number, 0 or more.").waitFor();
    await quota.getByLabel("Sandboxes").fill("7");
    await quota.getByLabel("CPU (cores)").fill("2.5");
    await quota.getByLabel("Memory (MiB)").fill("4096");
    await quota.getByRole("button", { name: "Save quota" }).click();
    await quota.waitFor({ state: "hidden" });
    await page.getByText("0 / 7", { exact: true }).waitFor();
    const t = (await call("GET", `/v1/tenants/${tenantId}`, adminKey)).tenant;
    assert.deepEqual(t.quota, { maxSandboxes: "7", maxCpuMillis: "2500", maxMemoryMib: "4096" });
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});
