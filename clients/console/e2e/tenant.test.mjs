// What a tenant keeps beside its sandboxes, through the console: a
// developer sets, replaces and deletes a secret (its value never comes
// back to the page) and creates and deletes a volume, with the server's
// rules shown as readable messages; a viewer sees neither form nor delete
// button, and its forced requests are refused 403.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { addUser, call, cleanUp, consoleUrl, csrfOf, launch, makeTenant, newSession, signIn, skip, unique } from "./lib.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

test("secrets: set, replace and delete; the value never comes back", { skip }, async () => {
  const t = await makeTenant("secrets");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, dev);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Secrets" }).click();
    await page.getByText("No secrets yet.").waitFor();

    // The name rule, before anything is sent.
    await page.getByLabel("Name", { exact: true }).fill("gh-token");
    await page.getByLabel("Value", { exact: true }).fill("x");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText(/A secret's name is 1 to 128 of A-Z/).waitFor();

    const value = `s3cret-${Date.now()}`;
    await page.getByLabel("Name", { exact: true }).fill("GH_TOKEN");
    await page.getByLabel("Value", { exact: true }).fill(value);
    await page.getByLabel("Delivery").selectOption("SECRET_DELIVERY_FILE");
    await page.getByRole("button", { name: "Save" }).click();
    const listed = page.getByRole("table", { name: "The tenant's secrets" });
    await listed.getByRole("cell", { name: "GH_TOKEN", exact: true }).waitFor();
    assert.match(await listed.innerText(), /file \/run\/secrets\/GH_TOKEN/);
    assert.equal(await page.getByLabel("Value", { exact: true }).inputValue(), "");
    assert.ok(!(await page.content()).includes(value), "the value is in the page");

    // Typing an existing name offers to replace it.
    await page.getByLabel("Name", { exact: true }).fill("GH_TOKEN");
    await page.getByRole("button", { name: "Replace" }).waitFor();
    await page.getByLabel("Value", { exact: true }).fill(`${value}-2`);
    await page.getByRole("button", { name: "Replace" }).click();
    await page.getByText("Secret replaced").waitFor();
    const r = await call("GET", "/v1/secrets", t.token);
    assert.deepEqual(
      r.secrets.map((s) => [s.name, s.delivery]),
      [["GH_TOKEN", "SECRET_DELIVERY_FILE"]],
    );
    assert.ok(!JSON.stringify(r).includes(value), "the API answered the value");

    await listed.getByRole("button", { name: "Delete GH_TOKEN" }).click();
    const confirm = page.getByRole("dialog", { name: "Delete secret GH_TOKEN?" });
    await confirm.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No secrets yet.").waitFor();
    assert.deepEqual((await call("GET", "/v1/secrets", t.token)).secrets ?? [], []);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("volumes: create and delete, with the rules shown; a viewer has no control and is refused", { skip }, async () => {
  const t = await makeTenant("volumes");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const viewer = await addUser(t, "ROLE_VIEWER", "viewer");
  const name = unique("v").toLowerCase().slice(0, 40).replace(/[^a-z0-9-]/g, "-");
  const d = await newSession(browser);
  try {
    await signIn(d.page, dev);
    await d.page.goto(`${consoleUrl}/volumes`);
    await d.page.getByText("No volumes yet.").waitFor();
    await d.page.getByLabel("Name", { exact: true }).fill("Bad_Name");
    await d.page.getByRole("button", { name: "Create", exact: true }).click();
    await d.page.getByText(/A volume's name is 1 to 63 of a-z/).waitFor();
    await d.page.getByLabel("Name", { exact: true }).fill(name);
    await d.page.getByLabel("Size (MiB)").fill("64");
    await d.page.getByRole("button", { name: "Create", exact: true }).click();
    const listed = d.page.getByRole("table", { name: "The tenant's volumes" });
    await listed.getByRole("cell", { name, exact: true }).waitFor();
    assert.match(await listed.innerText(), /64 MiB/);
    // The same name again: the server's refusal, readable, in the form.
    await d.page.getByLabel("Name", { exact: true }).fill(name);
    await d.page.getByRole("button", { name: "Create", exact: true }).click();
    await d.page.getByRole("alert").filter({ hasText: /exists/i }).waitFor();

    // A viewer: the list, no form, no delete; forced requests refused.
    const v = await newSession(browser);
    try {
      await signIn(v.page, viewer);
      await v.page.goto(`${consoleUrl}/volumes`);
      await v.page.getByRole("table", { name: "The tenant's volumes" }).getByRole("cell", { name, exact: true }).waitFor();
      assert.equal(await v.page.getByRole("button", { name: "Create", exact: true }).count(), 0);
      assert.equal(await v.page.getByRole("button", { name: /^Delete/ }).count(), 0);
      await v.page.goto(`${consoleUrl}/secrets`);
      await v.page.getByText("No secrets yet.").waitFor();
      assert.equal(await v.page.getByRole("button", { name: "Save" }).count(), 0);
      const csrf = await csrfOf(v.page);
      const forced = await v.page.evaluate(
        async ({ name, csrf }) => {
          const send = async (method, path, body) => {
            const r = await fetch(path, {
              method,
              headers: { "content-type": "application/json", "x-csrf-token": csrf },
              body: body === undefined ? undefined : JSON.stringify(body),
            });
            return { path: `${method} ${path}`, status: r.status };
          };
          return [
            await send("PUT", "/v1/secrets/FORCED", { value: "x" }),
            await send("POST", "/v1/volumes", { volume: { name: "forced" } }),
            await send("DELETE", `/v1/volumes/${name}`),
          ];
        },
        { name, csrf },
      );
      for (const f of forced) assert.equal(f.status, 403, `${f.path}: ${f.status}`);
    } finally {
      await v.context.close();
    }

    await listed.getByRole("button", { name: `Delete ${name}` }).click();
    await d.page.getByRole("dialog", { name: `Delete volume ${name}?` }).getByRole("button", { name: "Delete" }).click();
    await d.page.getByText("No volumes yet.").waitFor();
    assert.deepEqual((await call("GET", "/v1/volumes", t.token)).volumes ?? [], []);
    assert.deepEqual(d.problems.errors, []);
  } finally {
    await d.context.close();
  }
});
