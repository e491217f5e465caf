// What the console's end-to-end tests share: the live Talon they drive
// (TALON_URL, TALON_ADMIN_KEY: a platform admin's API key), the REST
// calls that make each test's own tenants, users and sandboxes (and clean
// the sandboxes up), Debian's Chromium through playwright-core, signing
// in through the form, axe-core injected into a page, and the results
// directory (test-results/, not committed).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

export const base = (process.env.TALON_URL ?? "").replace(/\/+$/, "");
export const adminKey = process.env.TALON_ADMIN_KEY ?? "";
/** false, or why every test here is skipped. */
export const skip =
  base && adminKey
    ? false
    : "needs TALON_URL (a live Talon, e.g. http://127.0.0.1:8080) and TALON_ADMIN_KEY (a platform admin's API key)";
export const consoleUrl = `${base}/console`;
export const resultsDir = new URL("../test-results/", import.meta.url).pathname;

// ---------------------------------------------------------------- REST

/** A REST call with a bearer credential: { status, body } (JSON when it parses). */
export async function rest(method, path, key, body, headers = {}) {
  const h = { ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  if (body !== undefined) h["content-type"] = "application/json";
  const r = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* NDJSON or plain text: kept as text */
  }
  return { status: r.status, body: parsed };
}

/** A REST call that must succeed: its body. */
export async function call(method, path, key, body) {
  const r = await rest(method, path, key, body);
  if (r.status < 200 || r.status > 299) {
    throw new Error(`${method} ${path}: ${r.status} ${typeof r.body === "string" ? r.body : JSON.stringify(r.body)}`);
  }
  return r.body;
}

let seq = 0;
/** A name no other run uses (tenants cannot be deleted). */
export function unique(label) {
  return `e2e-${label}-${Date.now().toString(36)}-${process.pid}-${++seq}`;
}

const password = () => `console-e2e-${randomBytes(9).toString("hex")}`;

/** Signs in through the REST API: an access token for the account. */
export async function login(email, pw) {
  const r = await call("POST", "/v1/auth/login", "", { email, password: pw });
  return r.tokens.accessToken;
}

const tenants = [];

/**
 * A new tenant with its first owner (POST /v1/tenants with the admin key).
 * Returns { tenantId, name, email, password, token } where token is the
 * owner's access token for REST set-up and clean-up.
 */
export async function makeTenant(label) {
  const name = unique(label);
  const email = `${name}@console-e2e.test`;
  const pw = password();
  const r = await call("POST", "/v1/tenants", adminKey, { name, ownerEmail: email, ownerPassword: pw });
  const t = { tenantId: r.tenant.tenantId, name, email, password: pw, token: await login(email, pw) };
  tenants.push(t);
  return t;
}

/**
 * A user of the tenant with a role and a password (POST
 * /v1/tenants/{id}/users with the admin key: CreateUser takes email,
 * password and role).
 */
export async function addUser(t, role, label = role.toLowerCase()) {
  const email = `${unique(label)}@console-e2e.test`;
  const pw = password();
  const r = await call("POST", `/v1/tenants/${t.tenantId}/users`, adminKey, { email, password: pw, role });
  assert.equal(r.user.role, role);
  return { email, password: pw, userId: r.user.userId, tenantId: t.tenantId };
}

/** A running sandbox of the tenant, made through the API. */
export async function makeSandbox(t, extra = {}) {
  const r = await call("POST", "/v1/sandboxes?waitUntilRunning=true", t.token, {
    resources: { cpuMillis: 250, memoryMib: 256 },
    ...extra,
  });
  assert.equal(r.sandbox.state, "SANDBOX_STATE_RUNNING");
  return r.sandbox;
}

export async function listSandboxes(t) {
  const r = await call("GET", "/v1/sandboxes?pageSize=500", t.token);
  return r.sandboxes ?? [];
}

export async function getSandbox(t, id) {
  return (await call("GET", `/v1/sandboxes/${id}`, t.token)).sandbox;
}

/** Deletes every sandbox the tenants made in this file still have. */
export async function cleanUp() {
  for (const t of tenants.splice(0)) {
    try {
      const token = await login(t.email, t.password);
      for (const s of await listSandboxes({ token })) {
        if (s.state !== "SANDBOX_STATE_DELETED") await rest("DELETE", `/v1/sandboxes/${s.sandboxId}`, token);
      }
    } catch (e) {
      console.error(`clean-up of ${t.name}: ${e.message}`);
    }
  }
}

/** Polls `f` until it returns a truthy value (or fails after `ms`). */
export async function until(f, what, ms = 20_000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await f();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// ------------------------------------------------------------- browser

/** Debian's Chromium, headless, with the flags of talon/tests/browser. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * A page with what went wrong in it kept: uncaught errors, console
 * errors, and Content-Security-Policy violations.
 */
export function watchPage(page) {
  const problems = { errors: [], console: [], csp: [] };
  page.on("pageerror", (e) => problems.errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const text = m.text();
    (text.includes("Content Security Policy") ? problems.csp : problems.console).push(text);
  });
  return problems;
}

/** A new context (its own cookies) and page. */
export async function newSession(browser, o = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...o });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const problems = watchPage(page);
  return { context, page, problems };
}

/** Signs in through the console's form; ends on the sandboxes page. */
export async function signIn(page, who) {
  await page.goto(`${consoleUrl}/sign-in`);
  await page.getByRole("heading", { name: "Sign in to Talon" }).waitFor();
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${consoleUrl}/sandboxes`);
  await page.getByRole("heading", { level: 1, name: "Sandboxes" }).waitFor();
}

/** The list's row of a sandbox (a locator). */
export function row(page, id) {
  return page.getByRole("table", { name: "Sandboxes" }).getByRole("row").filter({ hasText: id });
}

/** The ids the list shows. */
export async function listedIds(page) {
  return page
    .getByRole("table", { name: "Sandboxes" })
    .locator('[role="rowgroup"] [role="row"] a.mono')
    .allTextContents();
}

/** Marks the document, so a later check can tell the page was not reloaded. */
export async function markDocument(page) {
  await page.evaluate(() => {
    window.__e2eMark = "kept";
  });
}

export async function notReloaded(page) {
  assert.equal(await page.evaluate(() => window.__e2eMark), "kept", "the page was reloaded");
}

/** The page's CSRF token, as the console keeps it (sessionStorage). */
export function csrfOf(page) {
  return page.evaluate(() => sessionStorage.getItem("talon.csrf"));
}

// --------------------------------------------------------------- axe

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/**
 * Runs axe-core in the page (injected by evaluation, which the page's
 * CSP does not block): { violations: [{ id, impact, help, nodes,
 * targets }], incomplete: ["rule:nodes"…] } (incomplete: what axe could
 * not decide, such as contrast over a gradient).
 */
export async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(axeSource);
  const r = await page.evaluate(() =>
    window.axe.run(document, {
      resultTypes: ["violations", "incomplete"],
      runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    }),
  );
  return {
    violations: r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.length,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    })),
    incomplete: r.incomplete.map((v) => `${v.id}:${v.nodes.length}`),
  };
}

// ----------------------------------------------------------- results

export function results(file) {
  mkdirSync(resultsDir, { recursive: true });
  return resultsDir + file;
}

/** Merges `entry` into a JSON report under test-results/. */
export function report(file, key, entry) {
  const path = results(file);
  const all = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  all[key] = entry;
  writeFileSync(path, `${JSON.stringify(all, null, 2)}\n`);
}

// ------------------------------------------- owners, admins, workers
// (the owner and admin pages' tests: e2e/owner.test.mjs, e2e/admin.test.mjs)

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A platform admin with a password, for signing in through the form: a
 * new owner of the platform tenant (the admin key's), made through the
 * REST API (platform admins are the platform tenant's owners).
 */
export async function makePlatformAdmin(label = "admin") {
  const me = await call("GET", "/v1/auth/me", adminKey);
  assert.equal(me.platformAdmin, true, "TALON_ADMIN_KEY is not a platform admin's key");
  const email = `${unique(label)}@console-e2e.test`;
  const pw = password();
  const r = await call("POST", `/v1/tenants/${me.tenantId}/users`, adminKey, { email, password: pw, role: "ROLE_OWNER" });
  return { email, password: pw, userId: r.user.userId, tenantId: me.tenantId };
}

/** Removes a user made for a test (with the admin key). */
export async function removeUser(u) {
  const r = await rest("DELETE", `/v1/tenants/${u.tenantId}/users/${u.userId}`, adminKey);
  if (r.status !== 200) console.error(`removing ${u.email}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** The platform's workers, with the admin key. */
export async function workers() {
  return (await call("GET", "/v1/admin/workers", adminKey)).workers ?? [];
}

/**
 * What starting a second worker needs: TALON_BIN (the talon binary),
 * TALON_GRPC_URL (the server's gRPC URL) and TALON_DATA_DIR (talon up's
 * data directory, for keys/worker.token); TALON_AGENT_PATH when the
 * agent is not next to the binary, TALON_WORKER_DATA_LISTEN (default
 * 127.0.0.1:0) for its data plane. false, or why the test is skipped.
 */
export const workerSkip =
  skip ||
  (process.env.TALON_BIN && process.env.TALON_GRPC_URL && process.env.TALON_DATA_DIR
    ? false
    : "needs TALON_BIN (the talon binary), TALON_GRPC_URL (the server's gRPC URL) and TALON_DATA_DIR (talon up's data directory) to start a second worker");

/**
 * Starts a second worker of the live Talon in a data directory of its
 * own (no network for its sandboxes, its own cgroup parent, no prewarm
 * pool), and waits for it to be ACTIVE: { id, dir, child, log }.
 */
export async function startWorker() {
  const before = new Set((await workers()).map((w) => w.workerId));
  const dir = mkdtempSync(join(tmpdir(), "talon-console-e2e-worker-"));
  const cgroup = `talon-console-e2e-${process.pid}`;
  const args = [
    "worker",
    "--server-url",
    process.env.TALON_GRPC_URL,
    "--token-file",
    join(process.env.TALON_DATA_DIR, "keys", "worker.token"),
    "--data-dir",
    dir,
    "--data-listen",
    process.env.TALON_WORKER_DATA_LISTEN || "127.0.0.1:0",
    "--network",
    "none",
    "--prewarm-pool-size",
    "0",
    "--runsc",
    "none",
    "--cgroup-parent",
    cgroup,
  ];
  if (process.env.TALON_AGENT_PATH) args.push("--agent-path", process.env.TALON_AGENT_PATH);
  const log = [];
  const child = spawn(process.env.TALON_BIN, args, { env: { ...process.env, TALON_LOG: "warn" }, stdio: ["ignore", "pipe", "pipe"] });
  for (const s of [child.stdout, child.stderr]) s.on("data", (d) => log.push(String(d)));
  const w = { id: "", dir, child, log, cgroup };
  try {
    const found = await until(
      async () => {
        if (child.exitCode !== null) throw new Error(`the worker exited (${child.exitCode}): ${log.join("").slice(-2000)}`);
        return (await workers()).find((x) => !before.has(x.workerId) && x.state === "WORKER_STATE_ACTIVE");
      },
      "the second worker to register",
      60_000,
    );
    w.id = found.workerId;
    return w;
  } catch (e) {
    await stopWorker(w);
    throw e;
  }
}

/** Stops a worker started by startWorker, unmounts what it left and removes its directory. */
export async function stopWorker(w) {
  if (w.child.exitCode === null && w.child.signalCode === null) {
    const exited = new Promise((r) => w.child.once("exit", r));
    w.child.kill("SIGTERM");
    const t = setTimeout(() => w.child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(t);
  }
  const mounts = readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[1])
    .filter((m) => m && m.startsWith(w.dir))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) spawnSync("umount", ["-l", m]);
  rmSync(w.dir, { recursive: true, force: true });
  // Its cgroup parent, now empty, in each hierarchy (v1 has several; v2 one): the deepest first.
  const found = spawnSync("find", ["/sys/fs/cgroup", "-maxdepth", "6", "-type", "d", "-path", `*/${w.cgroup}*`], { encoding: "utf8" });
  const dirs = (found.stdout ?? "").split("\n").filter(Boolean).sort((a, b) => b.length - a.length);
  for (const d of dirs) spawnSync("rmdir", [d]);
}

/** The names of the main navigation's links. */
export async function mainNav(page) {
  return page.getByRole("navigation", { name: "Main" }).getByRole("link").allInnerTexts();
}
