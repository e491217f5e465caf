// Signing in and out through the console's form, who am I, and a second
// tab of the same browser (the session cookie is shared, the CSRF token
// is the first tab's alone) signing in again.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  addUser,
  cleanUp,
  consoleUrl,
  csrfOf,
  getSandbox,
  launch,
  listedIds,
  login,
  makeSandbox,
  makeTenant,
  newSession,
  rest,
  signIn,
  skip,
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

test("sign in through the form, see the sandboxes and who am I, sign out", { skip }, async () => {
  const t = await makeTenant("signin");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const sbx = await makeSandbox(t);
  const { context, page, problems } = await newSession(browser);
  try {
    // Signed out, a console page sends the visitor to sign in (and back after).
    await page.goto(`${consoleUrl}/sandboxes?state=running`);
    await page.waitForURL(/\/console\/sign-in\?next=/);
    assert.equal(
      new URL(page.url()).searchParams.get("next"),
      "/sandboxes?state=running",
    );

    // A wrong password is a readable error, and no session.
    await page.getByLabel("Email").fill(dev.email);
    await page.getByLabel("Password").fill("not-the-password-at-all");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.innerText(), /The email or the password is wrong/);
    assert.ok(!(await context.cookies()).some((c) => c.name === "__Host-talon-session"));

    await page.getByLabel("Password").fill(dev.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    // Back where it was sent from, with its filter.
    await page.waitForURL(`${consoleUrl}/sandboxes?state=running`);
    await page.getByRole("heading", { level: 1, name: "Sandboxes" }).waitFor();
    assert.match(await page.title(), /Sandboxes/);
    assert.equal(await page.getByLabel("State", { exact: true }).inputValue(), "SANDBOX_STATE_RUNNING");

    // The session is an HttpOnly cookie; the tab holds the CSRF token.
    const cookie = (await context.cookies()).find((c) => c.name === "__Host-talon-session");
    assert.ok(cookie, "no session cookie");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, "Lax");
    assert.equal(await page.evaluate(() => document.cookie.includes("talon-session")), false);
    assert.match((await csrfOf(page)) ?? "", /.{16,}/);

    // The header says who is signed in; the list shows the tenant's sandbox.
    const header = page.getByRole("banner");
    await header.getByText(dev.email).waitFor();
    assert.equal(await header.getByText("Developer", { exact: true }).count(), 1);
    await page.getByRole("table", { name: "Sandboxes" }).getByText(sbx.sandboxId).waitFor();
    assert.deepEqual(await listedIds(page), [sbx.sandboxId]);
    await page.getByText("Live", { exact: true }).waitFor();
    assert.equal(await page.getByRole("button", { name: "New sandbox" }).count(), 1);

    // Who am I.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account" }).click();
    await page.waitForURL(`${consoleUrl}/me`);
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
    const dl = await page.locator("dl").innerText();
    for (const want of [dev.email, dev.userId, t.tenantId, "Developer", "Browser session"]) {
      assert.ok(dl.includes(want), `who am I lacks ${want}: ${dl}`);
    }
    assert.match(dl, /Platform administrator\s+No/);

    // Sign out: back to signing in, the cookie gone, the token forgotten.
    await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${consoleUrl}/sign-in`);
    await page.getByRole("heading", { name: "Sign in to Talon" }).waitFor();
    assert.ok(!(await context.cookies()).some((c) => c.name === "__Host-talon-session"), "the cookie outlived sign-out");
    assert.equal(await csrfOf(page), null);
    assert.equal(await page.getByRole("banner").getByText(dev.email).count(), 0);
    // And the console knows it: a page that needs a session sends back to sign in.
    await page.goto(`${consoleUrl}/me`);
    await page.waitForURL(/\/console\/sign-in\?next=%2Fme/);
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } finally {
    await context.close();
  }
});

test("a second tab, without the first tab's CSRF token, signs in again (and out)", { skip }, async () => {
  const t = await makeTenant("tabs");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const sbx = await makeSandbox(t);
  const { context, page, problems: firstProblems } = await newSession(browser);
  const sessionCookie = async () => (await context.cookies()).find((c) => c.name === "__Host-talon-session")?.value;
  try {
    await signIn(page, dev);
    const first = await sessionCookie();

    // A new tab of the same browser: the cookie is there, the token is not.
    const tab = await context.newPage();
    const problems = watchPage(tab);
    await tab.goto(`${consoleUrl}/sandboxes`);
    await tab.getByRole("heading", { level: 1, name: "Sandboxes" }).waitFor();
    assert.equal(await csrfOf(tab), null);
    // It may look but offers no change, and says why.
    const banner = tab.getByRole("status").filter({ hasText: "holds no token for changes" });
    await banner.waitFor();
    assert.equal(await tab.getByRole("button", { name: "New sandbox" }).count(), 0);

    // Signing in again there works, although the browser sends the other
    // tab's cookie along (the gateway drops it for the sign-in).
    const req = tab.waitForRequest((r) => r.url().endsWith("/v1/auth/browser-session") && r.method() === "POST");
    await banner.getByRole("link", { name: "Sign in again" }).click();
    await tab.waitForURL(/\/console\/sign-in\?next=%2Fsandboxes/);
    assert.match(await tab.getByRole("status").filter({ hasText: "You are signed in as" }).innerText(), new RegExp(dev.email));
    await tab.getByLabel("Email").fill(dev.email);
    await tab.getByLabel("Password").fill(dev.password);
    await tab.getByRole("button", { name: "Sign in" }).click();
    const sent = await req;
    assert.match((await sent.headerValue("cookie")) ?? "", /__Host-talon-session=/, "the stale cookie was not sent: the case is not tested");
    const resp = await sent.response();
    assert.equal(resp.status(), 200, await resp.text());
    await tab.waitForURL(`${consoleUrl}/sandboxes`);
    await tab.getByRole("button", { name: "New sandbox" }).waitFor();
    assert.equal(await tab.getByText("holds no token for changes").count(), 0);
    const second = await sessionCookie();
    assert.notEqual(second, first, "signing in again kept the old session");

    // The new tab's token works for a change.
    const made = await tab.evaluate(async (csrf) => {
      const r = await fetch("/v1/sandboxes", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": csrf },
        body: JSON.stringify({ resources: { cpuMillis: 250, memoryMib: 256 } }),
      });
      return { status: r.status, body: await r.json() };
    }, await csrfOf(tab));
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.match(made.body.sandbox.sandboxId, /^sbx_/);
    assert.equal((await rest("DELETE", `/v1/sandboxes/${made.body.sandbox.sandboxId}`, t.token)).status, 200);

    // The first tab's token is now of the replaced session: a change it
    // tries is refused with what to do, and its controls give way to the banner.
    await page.bringToFront();
    await page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}`);
    const actions = page.getByRole("group", { name: "Actions" });
    await actions.getByRole("button", { name: "Pause" }).click();
    const dialog = page.getByRole("dialog", { name: `Pause ${sbx.sandboxId}?` });
    await dialog.getByRole("button", { name: "Pause" }).click();
    const refusal = dialog.getByRole("alert");
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /out of date .*Sign in again in this tab/s);
    assert.equal((await getSandbox(t, sbx.sandboxId)).state, "SANDBOX_STATE_RUNNING");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("status").filter({ hasText: "holds no token for changes" }).waitFor();
    assert.equal(await actions.count(), 0);
    assert.equal(await csrfOf(page), null);

    // It signs out without a token (the gateway asks only for our origin):
    // the cookie goes, and every tab follows.
    const out = page.waitForResponse((r) => r.url().endsWith("/v1/auth/browser-session") && r.request().method() === "DELETE");
    await page.getByRole("banner").getByRole("button", { name: "Sign out" }).click();
    assert.equal((await out).status(), 200);
    await page.waitForURL(`${consoleUrl}/sign-in`);
    assert.equal(await sessionCookie(), undefined);
    await tab.reload();
    await tab.waitForURL(/\/console\/sign-in\?next=%2Fsandboxes/);
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(firstProblems.errors, []);
  } finally {
    await context.close();
  }
});

test("a user changes their password on their account page; the old password's sessions end, this one goes on", { skip }, async () => {
  const t = await makeTenant("password");
  const dev = await addUser(t, "ROLE_DEVELOPER", "pw");
  // A session of the old password elsewhere (a REST access token).
  const elsewhere = await login(dev.email, dev.password);
  assert.equal((await rest("GET", "/v1/auth/me", elsewhere)).status, 200);
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, dev);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account" }).click();
    await page.getByRole("heading", { level: 2, name: "Change your password" }).waitFor();
    const form = page.getByRole("region", { name: "Change your password" });
    const next = `${dev.password}-new`;
    // Mistakes are told before anything is sent, or by the server.
    await form.getByLabel("Current password").fill(dev.password);
    await form.getByLabel("New password", { exact: true }).fill("short");
    await form.getByLabel("New password again").fill("shorter");
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByText("Too short: at least 12 characters.").waitFor();
    await form.getByText("The two new passwords differ.").waitFor();
    await form.getByLabel("Current password").fill("not the password at all");
    await form.getByLabel("New password", { exact: true }).fill(next);
    await form.getByLabel("New password again").fill(next);
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByRole("alert").filter({ hasText: "the current password is wrong" }).waitFor();
    // Right: changed, and this page signed in again with the new one.
    await form.getByLabel("Current password").fill(dev.password);
    await form.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("region", { name: "Notifications" }).getByText("Password changed", { exact: true }).waitFor();
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Your account" }).waitFor();
    await page.locator("#main").getByText(dev.email, { exact: true }).waitFor();
    // The old password's session is over, and the old password signs in no more.
    assert.equal((await rest("GET", "/v1/auth/me", elsewhere)).status, 401);
    assert.equal((await rest("POST", "/v1/auth/login", "", { email: dev.email, password: dev.password })).status, 401);
    assert.equal((await rest("POST", "/v1/auth/login", "", { email: dev.email, password: next })).status, 200);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});
