// The owner pages, as an owner uses them: add a user, change its role, and
// be refused (readably) when demoting or deleting the tenant's last owner;
// make an API key, see its secret once (it works as a bearer; a reload
// does not show it again), delete it. A developer and a viewer see no
// owner or admin navigation, and their forced admin requests are refused
// 403 by the server, as an owner's forced platform-admin requests are.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  addUser,
  adminKey,
  call,
  cleanUp,
  consoleUrl,
  csrfOf,
  launch,
  mainNav,
  makeTenant,
  newSession,
  rest,
  results,
  signIn,
  skip,
  unique,
  workers,
} from "./lib.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

const LAST_OWNER = "a tenant must keep at least one active owner";

test("an owner adds a user, changes its role, and is refused demoting the last owner", { skip }, async () => {
  const t = await makeTenant("owner");
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, t);
    const nav = await mainNav(page);
    assert.ok(nav.includes("Tenant"), nav.join());
    assert.ok(!nav.includes("Admin"), nav.join());
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Tenant" }).click();
    await page.getByRole("heading", { level: 1, name: "Users and roles" }).waitFor();
    const rowOf = (e) => page.getByRole("row").filter({ hasText: e });
    await rowOf(t.email).getByText("(you)").waitFor();

    // Add a developer.
    const email = `${unique("added")}@console-e2e.test`;
    await page.getByRole("button", { name: "Add user" }).click();
    const add = page.getByRole("dialog", { name: "Add a user" });
    await add.getByLabel("Email").fill(email);
    await add.getByLabel("Password").fill("short");
    await add.getByRole("button", { name: "Add user" }).click();
    await add.getByText("At least 12 characters.", { exact: true }).waitFor();
    await add.getByLabel("Password").fill("a-password-long-enough");
    await add.getByLabel("Role").selectOption({ label: "Developer" });
    await add.getByRole("button", { name: "Add user" }).click();
    await add.waitFor({ state: "hidden" });
    await rowOf(email).getByRole("cell", { name: "Developer", exact: true }).waitFor();
    const users = (await call("GET", `/v1/tenants/-/users`, t.token)).users;
    const added = users.find((u) => u.email === email);
    assert.equal(added?.role, "ROLE_DEVELOPER");

    // Make it a viewer.
    await page.getByRole("button", { name: `Change role of ${email}` }).click();
    const change = page.getByRole("dialog", { name: `Change the role of ${email}` });
    await change.getByLabel("New role").selectOption({ label: "Viewer" });
    await change.getByRole("button", { name: "Save role" }).click();
    await change.waitFor({ state: "hidden" });
    await rowOf(email).getByRole("cell", { name: "Viewer", exact: true }).waitFor();
    assert.equal((await call("GET", `/v1/tenants/-/users/${added.userId}`, t.token)).user.role, "ROLE_VIEWER");

    // Demote the last owner (themselves): refused, and the dialog says why.
    await page.getByRole("button", { name: `Change role of ${t.email}` }).click();
    const self = page.getByRole("dialog", { name: `Change the role of ${t.email}` });
    await self.getByLabel("New role").selectOption({ label: "Developer" });
    await self.getByRole("button", { name: "Save role" }).click();
    const refusal = self.getByRole("alert");
    await refusal.waitFor();
    const text = await refusal.innerText();
    assert.match(text, /Not possible in its current state/);
    assert.ok(text.includes(LAST_OWNER), text);
    await page.screenshot({ path: results("owner-last-owner-refusal.png") });
    await self.getByRole("button", { name: "Cancel" }).click();
    await self.waitFor({ state: "hidden" });
    // Deleting the last owner: the same refusal, in the confirmation.
    await page.getByRole("button", { name: `Delete ${t.email}` }).click();
    const del = page.getByRole("dialog", { name: `Delete ${t.email}?` });
    await del.getByRole("button", { name: "Delete" }).click();
    await del.getByRole("alert").filter({ hasText: LAST_OWNER }).waitFor();
    await del.getByRole("button", { name: "Cancel" }).click();
    const me = (await call("GET", "/v1/tenants/-/users", t.token)).users.find((u) => u.email === t.email);
    assert.equal(me.role, "ROLE_OWNER");

    // Disable, then delete, the added user.
    await page.getByRole("button", { name: `Disable ${email}` }).click();
    await page.getByRole("dialog", { name: `Disable ${email}?` }).getByRole("button", { name: "Disable" }).click();
    await rowOf(email).getByRole("cell", { name: "Disabled", exact: true }).waitFor();
    await page.getByRole("button", { name: `Delete ${email}` }).click();
    await page.getByRole("dialog", { name: `Delete ${email}?` }).getByRole("button", { name: "Delete" }).click();
    await rowOf(email).waitFor({ state: "detached" });
    assert.equal((await rest("GET", `/v1/tenants/-/users/${added.userId}`, t.token)).status, 404);

    // The quota page: the tenant's limits and usage, read-only for an owner.
    await page.getByRole("navigation", { name: "Tenant sections" }).getByRole("link", { name: "Quota and usage" }).click();
    await page.getByRole("heading", { level: 2, name: "Quota and usage" }).waitFor();
    await page.getByText("Sandboxes (not deleted)").waitFor();
    assert.equal(await page.getByRole("button", { name: "Edit quota" }).count(), 0);

    // The tenant's own audit log has the changes.
    await page.getByRole("navigation", { name: "Tenant sections" }).getByRole("link", { name: "Audit log" }).click();
    await page.getByLabel("Method").fill("/talon.v1.TenantService/UpdateUser");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/method=%2Ftalon\.v1\.TenantService%2FUpdateUser/);
    await page.getByRole("cell", { name: "TenantService.UpdateUser" }).first().waitFor();
    const outcomes = await page.getByRole("table", { name: "Audit records" }).locator("tbody tr td:nth-child(3)").allInnerTexts();
    // Role to viewer, disable (OK), and the refused demotion (FAILED_PRECONDITION).
    assert.deepEqual([...outcomes].sort(), ["FAILED_PRECONDITION", "OK", "OK"], outcomes.join());
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("an API key is shown once, works as a bearer, and is gone after delete", { skip }, async () => {
  const t = await makeTenant("keys");
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, t);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await page.getByRole("button", { name: "New API key" }).click();
    const create = page.getByRole("dialog", { name: "New API key" });
    await create.getByLabel("Name").fill("ci key");
    await create.getByLabel("Role").selectOption({ label: "Developer" });
    await create.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("dialog", { name: "Your new API key" });
    await shown.waitFor();
    await shown.getByText("you will not see it again", { exact: false }).first().waitFor();
    const secret = await shown.getByLabel("API key ci key").inputValue();
    assert.match(secret, /^tln_/);
    await shown.getByRole("button", { name: "Copy" }).waitFor();

    // It works as a bearer, with the role it was given.
    const me = await call("GET", "/v1/auth/me", secret);
    assert.equal(me.credentialKind, "CREDENTIAL_KIND_API_KEY");
    assert.equal(me.role, "ROLE_DEVELOPER");
    assert.equal(me.email, t.email);

    await shown.getByRole("button", { name: "I have copied it" }).click();
    await shown.waitFor({ state: "hidden" });
    const row = page.getByRole("row").filter({ hasText: "ci key" });
    await row.waitFor();
    assert.ok(!(await page.content()).includes(secret), "the secret stayed in the page");
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await row.waitFor();
    assert.ok(!(await page.content()).includes(secret), "a reload showed the secret again");
    assert.equal(await page.getByRole("dialog", { name: "Your new API key" }).count(), 0);

    await page.getByRole("button", { name: "Delete API key ci key" }).click();
    await page.getByRole("dialog", { name: "Delete API key ci key?" }).getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    assert.equal((await rest("GET", "/v1/auth/me", secret)).status, 401);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

/** Forced requests from the page's own session (with its CSRF token): their statuses. */
async function forced(page, workerId) {
  const csrf = await csrfOf(page);
  assert.ok(csrf, "the tab has no CSRF token");
  return page.evaluate(
    async ({ csrf, workerId }) => {
      const send = async (method, path, body) => {
        const r = await fetch(path, {
          method,
          headers: { "content-type": "application/json", "x-csrf-token": csrf },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return [`${method} ${path}`, r.status];
      };
      return Object.fromEntries([
        await send("GET", "/v1/admin/workers"),
        await send("POST", `/v1/admin/workers/${workerId}:drain`, {}),
        await send("POST", "/v1/admin/sandboxes/sbx_nosuch:reassign", { workerId }),
        await send("GET", "/v1/tenants"),
        await send("POST", "/v1/tenants", { name: "forced-tenant", ownerEmail: "x@forced.test", ownerPassword: "forced-password-1" }),
        await send("PATCH", "/v1/tenants/-/quota", { maxSandboxes: "1000" }),
      ]);
    },
    { csrf, workerId },
  );
}

const ADMIN_CALLS = [
  "GET /v1/admin/workers",
  "POST /v1/admin/workers/WID:drain",
  "POST /v1/admin/sandboxes/sbx_nosuch:reassign",
  "GET /v1/tenants",
  "POST /v1/tenants",
  "PATCH /v1/tenants/-/quota",
];

test("developers and viewers get no owner or admin navigation; forced admin calls are refused 403", { skip }, async () => {
  const t = await makeTenant("noadmin");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const viewer = await addUser(t, "ROLE_VIEWER", "viewer");
  const [w] = await workers();
  const expect403 = Object.fromEntries(ADMIN_CALLS.map((c) => [c.replace("WID", w.workerId), 403]));
  for (const who of [dev, viewer]) {
    const { context, page, problems } = await newSession(browser);
    try {
      await signIn(page, who);
      const nav = await mainNav(page);
      assert.ok(!nav.includes("Tenant") && !nav.includes("Admin"), `${who.email}: ${nav.join()}`);
      assert.ok(nav.includes("API keys"), nav.join());
      // By address: a page that says why, with no control.
      await page.goto(`${consoleUrl}/admin/workers`);
      await page.getByRole("heading", { level: 1, name: "For platform administrators" }).waitFor();
      assert.equal(await page.getByRole("button", { name: /^(Drain|Undrain|Choose a worker…)/ }).count(), 0);
      await page.goto(`${consoleUrl}/tenant/users`);
      await page.getByRole("heading", { level: 1, name: "For tenant owners" }).waitFor();
      assert.equal(await page.getByRole("button", { name: /^(Add user|Change role|Disable|Delete)/ }).count(), 0);
      // Forced, from the session: the server refuses.
      const got = await forced(page, w.workerId);
      const st = await page.evaluate(async () => {
        const r = await fetch("/v1/admin/audit-events");
        const u = await fetch("/v1/tenants/-/users", {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": sessionStorage.getItem("talon.csrf") },
          body: JSON.stringify({ email: "forced@forced.test", password: "forced-password-1", role: "ROLE_OWNER" }),
        });
        return { audit: r.status, createUser: u.status };
      });
      assert.deepEqual(got, expect403, who.email);
      assert.deepEqual(st, { audit: 403, createUser: 403 }, who.email);
      assert.deepEqual(problems.errors, []);
    } finally {
      await context.close();
    }
  }
  // An owner (not of the platform) has the tenant pages but no admin ones; its forced admin calls are refused too.
  const { context, page } = await newSession(browser);
  try {
    await signIn(page, t);
    const nav = await mainNav(page);
    assert.ok(nav.includes("Tenant") && !nav.includes("Admin"), nav.join());
    assert.deepEqual(await forced(page, w.workerId), expect403);
    // No worker was drained by any of it.
    assert.equal((await workers()).find((x) => x.workerId === w.workerId).state, w.state);
  } finally {
    await context.close();
  }
  assert.ok(adminKey);
});
