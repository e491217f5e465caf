// Every page of the console's first slice, visited as a person would:
// axe-core in each (no violation of serious or critical impact, light and
// dark), and screenshots of each in light and dark, by the system's
// preference (emulated prefers-color-scheme) and by the header's theme
// toggle (kept in localStorage). Written under test-results/: axe.json
// (the counts per page) and screenshots/*.png.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, statSync } from "node:fs";
import {
  addUser,
  axe,
  cleanUp,
  consoleUrl,
  launch,
  makeSandbox,
  makeTenant,
  makePlatformAdmin,
  removeUser,
  newSession,
  report,
  results,
  row,
  skip,
  until,
} from "./lib.mjs";
import { putFile, snapshotOf, startServer } from "./tools.mjs";

let browser;
let fixture;
before(async () => {
  if (!skip) browser = await launch();
});

/** Each test's own tenant: a developer and two running sandboxes. */
async function setUp(label) {
  const t = await makeTenant(label);
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const sbx = await makeSandbox(t, {
    metadata: { project: "console", owner: "e2e" },
    labels: { team: "qa" },
    env: { GREETING: "hi" },
  });
  const other = await makeSandbox(t);
  // For the files, previews and snapshots tabs (of the other sandbox): a file, a server on a port, a snapshot.
  await putFile(t, other.sandboxId, "/workspace/notes.txt", "# Notes\nfor the tour\n");
  await startServer(t, other.sandboxId, 8000, "<h1>tour</h1>");
  await snapshotOf(t, other.sandboxId, `tour-${label}`);
  fixture = { t, dev, sbx, other };
}
after(async () => {
  await browser?.close();
  await cleanUp();
});

/** The terminal's rows as text. */
const termText = (page) => page.locator(".xterm-rows").innerText();

/**
 * Walks through every page of the slice in a fresh context, calling
 * `at(name, page)` on each once it has settled.
 */
async function tour(o, at) {
  await devTour(o, at);
  await adminTour(o, at);
}

async function devTour(o, at) {
  const { dev, sbx } = fixture;
  const { context, page, problems } = await newSession(browser, o);
  try {
    await page.goto(`${consoleUrl}/sign-in`);
    await page.getByRole("heading", { name: "Sign in to Talon" }).waitFor();
    await at("sign-in", page);

    await page.getByLabel("Email").fill(dev.email);
    await page.getByLabel("Password").fill(dev.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${consoleUrl}/sandboxes`);
    await row(page, sbx.sandboxId).waitFor();
    await page.getByText("Live", { exact: true }).waitFor();
    await at("sandboxes", page);

    await page.getByRole("button", { name: "New sandbox" }).click();
    const dialog = page.getByRole("dialog", { name: "New sandbox" });
    await dialog.waitFor();
    await at("create-dialog", page);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    await row(page, sbx.sandboxId).getByRole("link").click();
    await page.getByRole("heading", { level: 2, name: "Metadata and labels" }).waitFor();
    await page.locator(".head .badge", { hasText: "Running" }).waitFor();
    await at("sandbox-overview", page);

    await page.getByRole("group", { name: "Actions" }).getByRole("button", { name: "Delete" }).click();
    const confirm = page.getByRole("dialog", { name: `Delete ${sbx.sandboxId}?` });
    await confirm.waitFor();
    await at("confirm-dialog", page);
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "hidden" });

    await page.getByRole("link", { name: "Run a command" }).click();
    await page.getByLabel("Command", { exact: true }).fill("echo hello from $(hostname); echo a warning >&2; exit 1");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Finished: exit code 1" }).waitFor();
    await at("sandbox-run", page);

    await page.getByRole("link", { name: "Terminal" }).click();
    await page.getByRole("status").filter({ hasText: /Connected \(pid \d+\)/ }).waitFor();
    await page.locator(".xterm").click();
    await until(async () => (await termText(page)).trim() !== "", "a prompt");
    await page.keyboard.type("echo $((6*7))");
    await page.keyboard.press("Enter");
    await until(async () => /^42$/m.test(await termText(page)), "42");
    // The page's own text and controls, not the terminal's keys, for what follows.
    await page.locator("h1").focus();
    await at("sandbox-terminal", page);

    await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Processes" }).click();
    await page.getByLabel("Command", { exact: true }).fill("echo tour; echo warn >&2");
    await page.getByLabel("Tag", { exact: true }).fill(`tour-${Date.now()}`);
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Ended: exit code 0" }).waitFor();
    await at("sandbox-processes", page);

    await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Code" }).click();
    await page.getByLabel("Cell 1 code").fill("print('tour'); 6 * 7");
    await page.getByRole("button", { name: "Run cell 1" }).click();
    await page.getByLabel("Cell 1 output").getByText(/^done/).waitFor({ timeout: 60_000 });
    await at("sandbox-code", page);

    const sections = page.getByRole("navigation", { name: "Sandbox sections" });
    await page.goto(`${consoleUrl}/sandboxes/${fixture.other.sandboxId}/files`);
    await page.getByRole("list", { name: "Files in /workspace" }).getByRole("button", { name: /^notes\.txt/ }).click();
    await page.getByLabel("Content of notes.txt").waitFor();
    await at("sandbox-files", page);
    await sections.getByRole("link", { name: "Previews" }).click();
    await page.getByRole("button", { name: "Make a link to port 8000" }).click();
    await page.getByLabel("Preview link to port 8000").waitFor();
    await at("sandbox-previews", page);
    await sections.getByRole("link", { name: "Snapshots" }).click();
    await page.getByRole("table", { name: "This sandbox's snapshots" }).waitFor();
    await at("sandbox-snapshots", page);
    await sections.getByRole("link", { name: "Network" }).click();
    await page.getByRole("radio", { name: "Allowlist" }).check();
    await page.getByLabel("Allowed domains").waitFor();
    await at("sandbox-network", page);

    await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Agent runs" }).click();
    await page.getByLabel("Agent command").fill('read p; echo "got $p"; touch /workspace/tour.txt');
    await page.getByLabel("Prompt").fill("tour");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Completed: exit code 0" }).waitFor();
    await at("sandbox-agents", page);

    await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Browser" }).click();
    await page.getByRole("button", { name: "Start the browser" }).waitFor();
    await at("sandbox-browser", page);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Secrets" }).click();
    await page.getByRole("heading", { level: 1, name: "Secrets" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "The tenant's secrets" }).waitFor();
    await at("secrets", page);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Volumes" }).click();
    await page.getByRole("heading", { level: 1, name: "Volumes" }).waitFor();
    await page.getByRole("heading", { level: 2, name: "The tenant's volumes" }).waitFor();
    await at("volumes", page);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Images" }).click();
    await page.getByRole("table", { name: "The catalogue" }).getByRole("cell", { name: "host", exact: true }).waitFor();
    await at("images", page);

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
    await at("me", page);

    await page.goto(`${consoleUrl}/no/such/page`);
    await page.getByRole("heading", { level: 1, name: "No page here" }).waitFor();
    await at("not-found", page);

    await page.goto(`${consoleUrl}/sandboxes/sbx_nosuchsandboxanywhere0000`);
    await page.getByRole("alert").filter({ hasText: "Not found" }).waitFor();
    await at("sandbox-not-found", page);
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
    return context;
  } catch (e) {
    await page.screenshot({ path: results("failure.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
}

/** The owner and admin pages (pages/owner, pages/admin), visited as a platform admin. */
const ADMIN_PAGES = [
  "api-keys",
  "api-key-dialog",
  "api-key-secret",
  "tenant-users",
  "tenant-add-user",
  "tenant-quota",
  "tenant-audit",
  "admin-workers",
  "admin-move-dialog",
  "admin-tenants",
  "admin-tenant",
  "admin-audit",
  "admin-metrics",
];
const admins = [];
after(async () => {
  for (const a of admins.splice(0)) await removeUser(a);
});

async function adminTour(o, at) {
  if (!fixture.admin) admins.push((fixture.admin = await makePlatformAdmin("a11y-admin")));
  const { admin, t, sbx } = fixture;
  const { context, page, problems } = await newSession(browser, o);
  const nav = (name) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name }).click();
  const closeDialog = async (name) => {
    await page.keyboard.press("Escape");
    await page.getByRole("dialog", { name }).waitFor({ state: "hidden" });
  };
  try {
    await page.goto(`${consoleUrl}/sign-in`);
    await page.getByLabel("Email").fill(admin.email);
    await page.getByLabel("Password").fill(admin.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${consoleUrl}/sandboxes`);

    await nav("API keys");
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await page.getByRole("cell", { name: "bootstrap", exact: true }).waitFor();
    await at("api-keys", page);
    await page.getByRole("button", { name: "New API key" }).click();
    await page.getByRole("dialog", { name: "New API key" }).waitFor();
    await at("api-key-dialog", page);
    await page.getByLabel("Name").fill("a11y");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("dialog", { name: "Your new API key" }).waitFor();
    await at("api-key-secret", page);
    await page.getByRole("button", { name: "I have copied it" }).click();

    await nav("Tenant");
    await page.getByRole("heading", { level: 1, name: "Users and roles" }).waitFor();
    await page.getByRole("cell", { name: new RegExp(admin.email) }).first().waitFor();
    await at("tenant-users", page);
    await page.getByRole("button", { name: "Add user" }).click();
    await page.getByRole("dialog", { name: "Add a user" }).waitFor();
    await at("tenant-add-user", page);
    await closeDialog("Add a user");

    await page.getByRole("navigation", { name: "Tenant sections" }).getByRole("link", { name: "Quota and usage" }).click();
    await page.getByRole("heading", { level: 2, name: "Quota and usage" }).waitFor();
    await at("tenant-quota", page);
    await page.getByRole("navigation", { name: "Tenant sections" }).getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    await page.getByRole("table", { name: "Audit records" }).locator("tbody tr td").first().waitFor();
    await at("tenant-audit", page);

    await nav("Admin");
    await page.getByRole("heading", { level: 1, name: "Workers" }).waitFor();
    await page.getByText("Active", { exact: true }).first().waitFor();
    await at("admin-workers", page);
    await page.getByLabel("Sandbox id").fill(sbx.sandboxId);
    await page.getByRole("button", { name: "Choose a worker…" }).click();
    await page.getByRole("dialog", { name: `Move ${sbx.sandboxId}` }).getByText("of tenant", { exact: false }).waitFor();
    await at("admin-move-dialog", page);
    await closeDialog(`Move ${sbx.sandboxId}`);

    await page.getByRole("navigation", { name: "Admin sections" }).getByRole("link", { name: "Tenants" }).click();
    await page.getByRole("link", { name: t.name }).waitFor();
    await at("admin-tenants", page);
    await page.getByRole("link", { name: t.name }).click();
    await page.getByRole("heading", { level: 2, name: "Quota and usage" }).waitFor();
    await page.getByRole("cell", { name: new RegExp(t.email) }).first().waitFor();
    await at("admin-tenant", page);

    await page.getByRole("navigation", { name: "Admin sections" }).getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    await page.getByRole("table", { name: "Audit records" }).locator("tbody tr td").first().waitFor();
    await at("admin-audit", page);

    await page.getByRole("navigation", { name: "Admin sections" }).getByRole("link", { name: "Metrics" }).click();
    await page.getByRole("heading", { level: 1, name: "Platform metrics" }).waitFor();
    await page.getByRole("region", { name: "Sandboxes now" }).locator("dd").first().waitFor();
    await at("admin-metrics", page);
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } catch (e) {
    await page.screenshot({ path: results("failure-admin.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await context.close();
  }
}

const PAGES = [
  "sign-in",
  "sandboxes",
  "create-dialog",
  "sandbox-overview",
  "confirm-dialog",
  "sandbox-run",
  "sandbox-terminal",
  "sandbox-processes",
  "sandbox-code",
  "sandbox-agents",
  "sandbox-browser",
  "sandbox-files",
  "sandbox-previews",
  "sandbox-snapshots",
  "sandbox-network",
  "secrets",
  "volumes",
  "images",
  "me",
  "not-found",
  "sandbox-not-found",
  ...ADMIN_PAGES,
];

test("axe-core on every page: no violation of serious or critical impact", { skip }, async () => {
  await setUp("axe");
  const counts = {};
  const bad = [];
  for (const colorScheme of ["light", "dark"]) {
    await tour({ colorScheme }, async (name, page) => {
      const { violations: v, incomplete } = await axe(page);
      const by = { critical: 0, serious: 0, moderate: 0, minor: 0 };
      for (const x of v) by[x.impact ?? "minor"] += 1;
      counts[`${name} (${colorScheme})`] = { ...by, rules: v.map((x) => `${x.id}:${x.impact}:${x.nodes}`), incomplete };
      for (const x of v) {
        if (x.impact === "serious" || x.impact === "critical") bad.push({ page: name, colorScheme, ...x });
      }
    });
  }
  report("axe.json", "counts", counts);
  report("axe.json", "serious-or-critical", bad);
  assert.deepEqual(Object.keys(counts).length, PAGES.length * 2, Object.keys(counts).join());
  assert.deepEqual(bad, [], JSON.stringify(bad, null, 2));
});

test("screenshots of each page in light and dark; the theme toggle is kept", { skip }, async () => {
  await setUp("shots");
  const dir = results("screenshots/");
  mkdirSync(dir, { recursive: true });
  const backgrounds = {};
  const shots = [];
  const shoot = async (file, page) => {
    // Let the caret, transitions and the live dot settle.
    await page.waitForTimeout(150);
    // A modal's backdrop covers the viewport only: the viewport for those.
    const fullPage = !file.includes("dialog");
    await page.screenshot({ path: dir + file, fullPage, animations: "disabled", caret: "hide" });
    assert.ok(statSync(dir + file).size > 5_000, `${file} is nearly empty`);
    shots.push(file);
  };
  // By the system's preference.
  for (const colorScheme of ["light", "dark"]) {
    await tour({ colorScheme }, async (name, page) => {
      backgrounds[`${name}-${colorScheme}`] = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      await shoot(`${name}-${colorScheme}.png`, page);
    });
  }
  for (const name of PAGES) {
    assert.notEqual(backgrounds[`${name}-light`], backgrounds[`${name}-dark`], `${name}: light and dark look alike`);
  }

  // By the toggle: the system says light, the person picks dark (and back).
  const { dev, sbx } = fixture;
  const { context, page } = await newSession(browser, { colorScheme: "light" });
  try {
    await page.goto(`${consoleUrl}/sign-in`);
    await page.getByLabel("Email").fill(dev.email);
    await page.getByLabel("Password").fill(dev.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await row(page, sbx.sandboxId).waitFor();
    const toggle = page.getByRole("banner").getByRole("button", { name: /theme: change theme$/ });
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(await toggle.getAttribute("aria-label"), "System theme: change theme");
    assert.equal(await bg(), backgrounds["sandboxes-light"]);
    await toggle.click(); // system → light
    assert.equal(await toggle.getAttribute("aria-label"), "Light theme: change theme");
    await toggle.click(); // light → dark
    assert.equal(await toggle.getAttribute("aria-label"), "Dark theme: change theme");
    assert.equal(await page.evaluate(() => localStorage.getItem("talon.theme")), "dark");
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
    assert.equal(await bg(), backgrounds["sandboxes-dark"]);
    await shoot("sandboxes-dark-toggle.png", page);
    // Kept across a reload and on every page, the terminal's colours too.
    await page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}/terminal`);
    await page.getByRole("status").filter({ hasText: /Connected \(pid \d+\)/ }).waitFor();
    assert.equal(await bg(), backgrounds["sandboxes-dark"]);
    // (xterm's text colour comes from the theme it is given, read from the tokens.)
    const termBg = () => page.evaluate(() => getComputedStyle(document.querySelector(".xterm-rows")).color);
    const darkTerm = await termBg();
    await shoot("sandbox-terminal-dark-toggle.png", page);
    await page.getByRole("banner").getByRole("button", { name: /theme: change theme$/ }).click(); // dark → system (light)
    assert.equal(await page.evaluate(() => localStorage.getItem("talon.theme")), null);
    assert.equal(await bg(), backgrounds["sandboxes-light"]);
    await until(async () => (await termBg()) !== darkTerm, "the terminal to follow the theme", 5_000);
    await page.getByRole("banner").getByRole("button", { name: /theme: change theme$/ }).click(); // system → light
    await page.reload();
    await page.getByRole("status").filter({ hasText: /Connected \(pid \d+\)/ }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem("talon.theme")), "light");
    await shoot("sandbox-terminal-light-toggle.png", page);
  } finally {
    await context.close();
  }
  // And the other way: the system says dark, the person picks light.
  const s2 = await newSession(browser, { colorScheme: "dark" });
  try {
    await s2.page.goto(`${consoleUrl}/sign-in`);
    await s2.page.evaluate(() => localStorage.setItem("talon.theme", "light"));
    await s2.page.reload();
    await s2.page.getByRole("heading", { name: "Sign in to Talon" }).waitFor();
    assert.equal(await s2.page.evaluate(() => getComputedStyle(document.body).backgroundColor), backgrounds["sign-in-light"]);
    await shoot("sign-in-light-toggle.png", s2.page);
  } finally {
    await s2.context.close();
  }
  report("screenshots.json", "files", shots);
  assert.equal(shots.length, PAGES.length * 2 + 4);
});
