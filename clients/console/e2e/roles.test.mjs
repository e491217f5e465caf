// What a session may see and do: a viewer is offered no control that
// changes anything (and the gateway refuses the change when the page is
// forced to send it), and a session of tenant B never sees tenant A's
// sandboxes, in the list, live, or by address.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  addUser,
  call,
  cleanUp,
  consoleUrl,
  csrfOf,
  getSandbox,
  launch,
  listSandboxes,
  listedIds,
  makeSandbox,
  makeTenant,
  newSession,
  rest,
  row,
  signIn,
  skip,
  until,
} from "./lib.mjs";

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  await browser?.close();
  await cleanUp();
});

/**
 * Buttons a viewer may be shown: none of them changes anything of the
 * tenant's ("Change password" changes the viewer's own password, which
 * every role may).
 */
const HARMLESS = new Set(["Skip to content", "Sign out", "Apply", "Clear filters", "Try again", "Load more", "Close", "Change password"]);
const isHarmless = (name) => HARMLESS.has(name) || /theme: change theme$/.test(name) || /^Remove metadata filter /.test(name);

/** The accessible names of the page's buttons that are not harmless. */
async function mutatingButtons(page) {
  const names = [];
  for (const b of await page.getByRole("button").all()) {
    const name = ((await b.getAttribute("aria-label")) ?? (await b.innerText())).trim();
    if (!isHarmless(name)) names.push(name);
  }
  return names;
}

test("a viewer's session: no mutating control, and forced changes are refused 403", { skip }, async () => {
  const t = await makeTenant("viewer");
  const viewer = await addUser(t, "ROLE_VIEWER", "viewer");
  const sbx = await makeSandbox(t, { metadata: { who: "viewer-test" } });
  const paused = await makeSandbox(t);
  await call("POST", `/v1/sandboxes/${paused.sandboxId}:pause`, t.token, {});
  const { context, page, problems } = await newSession(browser);
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  try {
    await signIn(page, viewer);
    await page.getByRole("banner").getByText("Viewer", { exact: true }).waitFor();
    await row(page, sbx.sandboxId).waitFor();
    await row(page, paused.sandboxId).waitFor();
    assert.equal(await page.getByRole("button", { name: "New sandbox" }).count(), 0);
    assert.equal(await page.getByRole("dialog").count(), 0);
    assert.deepEqual(await mutatingButtons(page), []);
    // It did sign in: it holds a token (so a refusal below is its role's, not a missing token's).
    const token = await csrfOf(page);
    assert.ok(token, "the viewer's tab has no CSRF token");

    // A sandbox's page: no action, no run, no terminal.
    for (const s of [sbx, paused]) {
      await row(page, s.sandboxId).getByRole("link").click();
      await page.getByRole("heading", { level: 2, name: "State" }).waitFor();
      assert.equal(await page.getByRole("group", { name: "Actions" }).count(), 0);
      const tabs = await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link").allInnerTexts();
      // Read-only sections only (their controls hidden: e2e/tools.test.mjs): none that runs anything.
      assert.equal(tabs[0], "Overview");
      for (const name of ["Run a command", "Terminal", "Processes", "Code", "Agent runs"]) assert.ok(!tabs.includes(name), name);
      assert.deepEqual(await mutatingButtons(page), []);
      await page.goBack();
      await page.getByRole("heading", { level: 1, name: "Sandboxes" }).waitFor();
    }
    // By address: the run and terminal sections say why there is nothing to use.
    for (const tab of ["run", "terminal"]) {
      await page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}/${tab}`);
      await page.getByText("Your role (viewer) can look at sandboxes but not run anything in them.").waitFor();
      assert.equal(await page.getByRole("textbox", { name: "Command" }).count(), 0);
      assert.equal(await page.locator(".xterm").count(), 0);
      assert.equal(await page.locator("textarea, [contenteditable]").count(), 0);
      assert.deepEqual(await mutatingButtons(page), []);
    }
    assert.deepEqual(sockets, [], "a viewer's page opened a terminal socket");
    await page.goto(`${consoleUrl}/me`);
    await page.getByText("As a viewer you can see the tenant's sandboxes but not create or change them.").waitFor();
    assert.match(await page.locator("dl").innerText(), /Role\s+Viewer/);
    assert.deepEqual(await mutatingButtons(page), []);

    // Forced: the page's own fetch with its CSRF token, from the gateway's origin.
    const id = sbx.sandboxId;
    const forced = await page.evaluate(
      async ({ id, paused, csrf }) => {
        const send = async (method, path, body) => {
          const r = await fetch(path, {
            method,
            headers: { "content-type": "application/json", "x-csrf-token": csrf },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return { path: `${method} ${path}`, status: r.status, body: await r.text() };
        };
        return [
          await send("POST", "/v1/sandboxes", { resources: { cpuMillis: 250, memoryMib: 256 } }),
          await send("POST", `/v1/sandboxes/${id}:pause`, {}),
          await send("POST", `/v1/sandboxes/${id}:stop`, {}),
          await send("POST", `/v1/sandboxes/${paused}:resume`, {}),
          await send("DELETE", `/v1/sandboxes/${id}`),
          await send("POST", `/v1/sandboxes/${id}/processes`, { command: ["sh", "-c", "touch /workspace/pwned"] }),
          await send("POST", `/v1/sandboxes/${id}/files:mkdir?path=pwned-dir`, {}),
        ];
      },
      { id, paused: paused.sandboxId, csrf: token },
    );
    for (const f of forced) {
      assert.equal(f.status, 403, `${f.path}: ${f.status} ${f.body}`);
      assert.equal(JSON.parse(f.body).code, 7, `${f.path}: ${f.body}`);
    }
    // The terminal's socket, forced: refused before any shell starts.
    const pty = await page.evaluate(
      (id) =>
        new Promise((resolve) => {
          const frames = [];
          const ws = new WebSocket(`ws://${location.host}/v1/sandboxes/${id}/pty`);
          ws.binaryType = "arraybuffer";
          ws.onopen = () =>
            ws.send(JSON.stringify({ open: { command: { command: ["sh", "-c", "touch /workspace/pwned"] }, size: { cols: 80, rows: 24 } } }));
          ws.onmessage = (e) => frames.push(typeof e.data === "string" ? e.data : `<${e.data.byteLength} bytes>`);
          ws.onclose = (e) => resolve({ code: e.code, frames });
          setTimeout(() => resolve({ code: "timeout", frames }), 10_000);
        }),
      id,
    );
    assert.notEqual(pty.code, "timeout", JSON.stringify(pty));
    assert.ok(!pty.frames.some((f) => f.startsWith('{"pid"')), `a viewer's terminal started: ${JSON.stringify(pty)}`);
    assert.ok(pty.frames.some((f) => /"code":\s*7/.test(f)), `the refusal is not PERMISSION_DENIED: ${JSON.stringify(pty)}`);

    // Nothing changed.
    const after = await listSandboxes(t);
    assert.deepEqual(after.map((s) => s.sandboxId).sort(), [sbx.sandboxId, paused.sandboxId].sort());
    assert.equal((await getSandbox(t, id)).state, "SANDBOX_STATE_RUNNING");
    assert.equal((await getSandbox(t, paused.sandboxId)).state, "SANDBOX_STATE_PAUSED");
    for (const p of ["pwned", "pwned-dir"]) {
      const stat = await rest("GET", `/v1/sandboxes/${id}/files:stat?path=${p}`, t.token);
      assert.equal(stat.status, 404, `${p} was made: ${JSON.stringify(stat.body)}`);
    }
    // And reading is allowed: the control that the session works.
    assert.equal(await page.evaluate(async (id) => (await fetch(`/v1/sandboxes/${id}`)).status, id), 200);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("tenant isolation: a session of tenant B never sees tenant A's sandboxes", { skip }, async () => {
  const a = await makeTenant("iso-a");
  const b = await makeTenant("iso-b");
  const devB = await addUser(b, "ROLE_DEVELOPER", "dev-b");
  const a1 = await makeSandbox(a, { metadata: { secret: "of-a" }, labels: { team: "a" } });
  const b1 = await makeSandbox(b);
  const { context, page, problems } = await newSession(browser);
  try {
    await signIn(page, devB);
    await row(page, b1.sandboxId).waitFor();
    await page.getByText("Live", { exact: true }).waitFor();
    // Every id the list ever renders from here on.
    await page.evaluate(() => {
      window.__ids = new Set();
      const look = () => document.querySelectorAll('[role="rowgroup"] a.mono').forEach((el) => window.__ids.add(el.textContent));
      look();
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    assert.deepEqual(await listedIds(page), [b1.sandboxId]);

    // A's tenant changes while B watches: a new sandbox, a pause. Then B's
    // own new sandbox arrives (so the stream was live through A's events).
    const a2 = await makeSandbox(a);
    await call("POST", `/v1/sandboxes/${a1.sandboxId}:pause`, a.token, {});
    const b2 = await makeSandbox(b);
    await row(page, b2.sandboxId).waitFor();
    await call("DELETE", `/v1/sandboxes/${a2.sandboxId}`, a.token);
    await call("POST", `/v1/sandboxes/${b1.sandboxId}:pause`, b.token, {});
    await row(page, b1.sandboxId).locator(".badge", { hasText: "Paused" }).waitFor();
    const seen = await page.evaluate(() => [...window.__ids].sort());
    assert.deepEqual(seen, [b1.sandboxId, b2.sandboxId].sort());

    // Filters on A's metadata or labels find nothing.
    await page.goto(`${consoleUrl}/sandboxes`);
    await page.getByLabel("Labels", { exact: true }).fill("team=a");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("No sandbox matches these filters").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.getByLabel("Metadata key", { exact: true }).fill("secret");
    await page.getByLabel("Metadata value", { exact: true }).fill("of-a");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("No sandbox matches these filters").waitFor();
    assert.deepEqual(await listedIds(page), []);

    // By address: a readable not-found, the same as for an id that never was.
    const messages = {};
    for (const id of [a1.sandboxId, "sbx_nosuchsandboxanywhere0000"]) {
      for (const tab of ["", "/run", "/terminal"]) {
        await page.goto(`${consoleUrl}/sandboxes/${id}${tab}`);
        const alert = page.getByRole("alert");
        await alert.waitFor();
        const text = (await alert.innerText()).trim();
        assert.match(text, /^Not found\. .{10,}/, text);
        messages[`${id === a1.sandboxId ? "a" : "none"}${tab}`] = text.replaceAll(id, "<id>");
        // Not a blank page: the heading, the way back, the header.
        await page.getByRole("heading", { level: 1, name: id }).waitFor();
        await page.getByRole("link", { name: "Sandboxes" }).first().waitFor();
        assert.equal(await page.getByRole("group", { name: "Actions" }).count(), 0);
        assert.equal(await page.locator(".xterm").count(), 0);
        assert.equal(await page.getByRole("textbox", { name: "Command" }).count(), 0);
        assert.ok(!(await page.locator("main").innerText()).includes("of-a"));
      }
    }
    assert.equal(messages.a, messages.none, JSON.stringify(messages));
    // The page's own calls for A's sandbox: 404, as for no sandbox at all.
    const direct = await page.evaluate(async ([id, csrf]) => {
      const st = async (method, path) =>
        (await fetch(path, { method, headers: { "x-csrf-token": csrf ?? "", "content-type": "application/json" }, body: method === "GET" ? undefined : "{}" })).status;
      return {
        get: await st("GET", `/v1/sandboxes/${id}`),
        events: await st("GET", `/v1/sandbox-events?sandboxId=${id}`),
        resume: await st("POST", `/v1/sandboxes/${id}:resume`),
      };
    }, [a1.sandboxId, await csrfOf(page)]);
    assert.deepEqual(direct, { get: 404, events: 404, resume: 404 });
    assert.equal((await getSandbox(a, a1.sandboxId)).state, "SANDBOX_STATE_PAUSED");
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});
