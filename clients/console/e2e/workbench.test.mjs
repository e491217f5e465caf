// A developer's workbench on a sandbox's page: the notebook (a matplotlib
// plot comes back as an image, a table as HTML in a frame where no script
// runs, an error with its traceback, state kept between cells); processes
// (a tagged one with stdin, found again by its tag after a reload, a
// signal, its kept log); and the overview's metrics and events.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  addUser,
  call,
  cleanUp,
  consoleUrl,
  launch,
  makeSandbox,
  makeTenant,
  newSession,
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

async function developerOn(label, tab) {
  const t = await makeTenant(label);
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const sbx = await makeSandbox(t, { resources: { cpuMillis: 1000, memoryMib: 512 } });
  const s = await newSession(browser);
  await signIn(s.page, dev);
  await s.page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}${tab ? `/${tab}` : ""}`);
  return { t, dev, sbx, ...s };
}

const cell = (page, n) => page.getByLabel(`Cell ${n} code`);
const output = (page, n) => page.getByLabel(`Cell ${n} output`);

test("the notebook: a matplotlib plot as an image, a table in a script-less frame, an error, state kept", { skip }, async () => {
  const { page, problems, context } = await developerOn("code", "code");
  try {
    await page.getByRole("heading", { name: "Code" }).waitFor();
    await cell(page, 1).fill("import matplotlib\nimport matplotlib.pyplot as plt\nx = 6 * 7\nplt.plot([1, 3, 2])\nplt.show()");
    await page.getByRole("button", { name: "Run cell 1" }).click();
    const img = output(page, 1).getByRole("img");
    await img.waitFor({ timeout: 60_000 });
    assert.match(await img.getAttribute("src"), /^data:image\/png;base64,iVBORw0KGgo/);
    // The image decoded: it has a size.
    await until(() => img.evaluate((el) => el.complete && el.naturalWidth > 100), "the plot to decode");
    await output(page, 1).getByText(/^done/).waitFor();

    // The next cell sees x; Shift+Enter runs it; the main result is shown.
    await cell(page, 2).fill("x + 0");
    await cell(page, 2).press("Shift+Enter");
    await output(page, 2).getByText("42", { exact: true }).waitFor();

    // A table: HTML in a sandboxed frame (no scripts, an opaque origin).
    await cell(page, 3).fill(
      "from IPython.display import HTML\nHTML('<table><tr><td id=\"v\">7</td></tr></table><script>parent.document.title=\"pwned\"</script>')",
    );
    await page.getByRole("button", { name: "Run cell 3" }).click();
    const frame = output(page, 3).locator("iframe");
    await frame.waitFor();
    assert.equal(await frame.getAttribute("sandbox"), "");
    await page.frameLocator("iframe[title^='HTML result']").locator("#v").waitFor();
    assert.equal(await page.frameLocator("iframe[title^='HTML result']").locator("#v").innerText(), "7");
    assert.notEqual(await page.title(), "pwned");

    // An error with its traceback, colours stripped.
    await cell(page, 4).fill("1/0");
    await page.getByRole("button", { name: "Run cell 4" }).click();
    const err = output(page, 4).getByRole("group", { name: "Error" });
    await err.waitFor();
    assert.match(await err.innerText(), /ZeroDivisionError: division by zero/);
    assert.doesNotMatch(await err.innerText(), /\u001b\[/);
    await output(page, 4).getByText(/^failed/).waitFor();

    // One context was made, and it counts the runs.
    const ctx = page.getByLabel("Context");
    assert.match(await ctx.locator("option:checked").innerText(), /Python · .* · 4 runs/);
    assert.deepEqual(problems.errors, []);
    assert.deepEqual(problems.csp, []);
  } finally {
    await context.close();
  }
});

test("processes: a tagged one with stdin, found again by its tag after a reload, its log, a signal", { skip }, async () => {
  const { t, sbx, page, problems, context } = await developerOn("proc", "processes");
  try {
    await page.getByRole("heading", { name: "Start a process" }).waitFor();
    await page.getByLabel("Command", { exact: true }).fill("echo ready; while read l; do echo \"got $l\"; done");
    await page.getByLabel("Tag", { exact: true }).fill("echoer");
    await page.getByLabel("Keep stdin open").check();
    await page.getByRole("button", { name: "Start", exact: true }).click();
    const live = page.getByLabel("Live output");
    await until(async () => (await live.innerText()).includes("ready"), "its first line");
    await page.getByLabel("A line of stdin").fill("hello there");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await until(async () => (await live.innerText()).includes("got hello there"), "the echoed line");

    // After a reload, found again by its tag, with what it printed so far.
    await page.reload();
    await page.getByRole("button", { name: "Open tag echoer" }).click();
    await until(async () => (await page.getByLabel("Live output").innerText()).includes("got hello there"), "the replayed output");
    await page.getByLabel("A line of stdin").fill("again");
    await page.getByRole("button", { name: "Send", exact: true }).click();
    await until(async () => (await page.getByLabel("Live output").innerText()).includes("got again"), "the second line");

    // Its kept log, a page at a time.
    await page.getByRole("button", { name: "Read its log" }).click();
    await until(async () => (await page.getByLabel("Kept log").innerText()).includes("got again"), "the kept log");

    // SIGTERM ends it: the stream says so, and the list shows it ended.
    await page.getByLabel("Signal", { exact: true }).selectOption("15");
    await page.getByRole("button", { name: "Send signal" }).click();
    await page.getByRole("status").filter({ hasText: "killed by signal 15" }).waitFor();
    const listed = await call("GET", `/v1/sandboxes/${sbx.sandboxId}/processes?includeExited=true`, t.token);
    const p = listed.processes.find((x) => x.tag === "echoer");
    assert.equal(p.running ?? false, false);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("the overview: metrics drawn over time, and events as they come", { skip }, async () => {
  const { t, sbx, page, problems, context } = await developerOn("activity", "");
  try {
    await page.getByRole("heading", { name: "Metrics" }).waitFor();
    // Two samples at least: each chart has a line.
    await until(async () => (await page.locator("svg polyline").count()) === 3, "three charts with lines", 20_000);
    const mem = page.getByRole("img", { name: /^Memory over the last \d+ samples, now .* of .*/ });
    await mem.waitFor();
    // An event: pause it through the API; the page lists it without a reload.
    await call("POST", `/v1/sandboxes/${sbx.sandboxId}:pause`, t.token, {});
    const events = page.getByRole("region", { name: "Events" });
    await until(async () => /Paused/.test(await events.innerText()), "the pause event");
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("agent runs: the prompt on stdin, output and file changes live, reattached after a reload, cancelled", { skip }, async () => {
  const { page, problems, context } = await developerOn("agent", "agents");
  try {
    await page.getByRole("heading", { name: "Run an agent" }).waitFor();
    await page.getByLabel("Agent command").fill('read p; echo "got: $p"; echo done > /workspace/agent-out.txt; echo oops >&2');
    await page.getByLabel("Prompt").fill("write the file");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Completed: exit code 0" }).waitFor({ timeout: 30_000 });
    const out = page.getByRole("log", { name: "Agent output" });
    assert.match(await out.innerText(), /^got: write the file$/m);
    assert.equal(await out.locator(".stderr").innerText(), "oops\n");
    const changes = page.getByRole("list", { name: "Files changed" });
    await changes.getByText("/workspace/agent-out.txt").waitFor();
    assert.match(await changes.innerText(), /Create\s+\/workspace\/agent-out\.txt/i);
    const runId = (await page.getByRole("heading", { name: /^Run run_/ }).innerText()).replace(/^Run /, "").trim();

    // After a reload: the run is listed, and opening it replays its events.
    await page.reload();
    await page.getByRole("button", { name: `Open run ${runId}` }).click();
    await page.getByRole("status").filter({ hasText: "Completed: exit code 0" }).waitFor();
    assert.match(await page.getByRole("log", { name: "Agent output" }).innerText(), /^got: write the file$/m);

    // A long one, cancelled: it completes killed.
    await page.getByLabel("Agent command").fill("sleep 300");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByRole("status").filter({ hasText: /Running \(pid \d+\)/ }).waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    const done = page.getByRole("status").filter({ hasText: "Completed: exit code" });
    await done.waitFor({ timeout: 20_000 });
    assert.match(await done.innerText(), /exit code (137|143)/);
    assert.deepEqual(problems.errors, []);
  } finally {
    await context.close();
  }
});

test("the browser: started from the page, its first page shown, the live view linked; a viewer only looks", { skip }, async () => {
  const t = await makeTenant("browser");
  const dev = await addUser(t, "ROLE_DEVELOPER", "dev");
  const viewer = await addUser(t, "ROLE_VIEWER", "viewer");
  const sbx = await makeSandbox(t, { resources: { cpuMillis: 1000, memoryMib: 1024 } });
  const s = await newSession(browser);
  try {
    await signIn(s.page, dev);
    await s.page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}/browser`);
    await s.page.getByLabel("Window size").fill("1024,640");
    await s.page.getByRole("button", { name: "Start the browser" }).click();
    const shot = s.page.getByRole("img", { name: /^The browser's first page/ });
    await shot.waitFor({ timeout: 60_000 });
    await until(() => shot.evaluate((el) => el.complete && el.naturalWidth === 1024), "a 1024-wide screenshot");
    const live = s.page.getByRole("link", { name: "Open the live view" });
    assert.match(await live.getAttribute("href"), new RegExp(`/cdp/${sbx.sandboxId}/[^/]+/live$`));
    assert.equal(await live.getAttribute("rel"), "noopener noreferrer");

    // A viewer: the state and the screenshot, no URL and no control.
    const v = await newSession(browser);
    try {
      await signIn(v.page, viewer);
      await v.page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}/browser`);
      await v.page.getByRole("img", { name: /^The browser's first page/ }).waitFor({ timeout: 30_000 });
      assert.equal(await v.page.getByRole("link", { name: "Open the live view" }).count(), 0);
      assert.equal(await v.page.getByRole("button", { name: /Stop the browser|Copy the CDP URL/ }).count(), 0);
    } finally {
      await v.context.close();
    }

    await s.page.getByRole("button", { name: "Stop the browser" }).click();
    await s.page.getByRole("button", { name: "Start the browser" }).waitFor({ timeout: 30_000 });
    const b = await call("GET", `/v1/sandboxes/${sbx.sandboxId}/browser`, t.token);
    assert.equal(b.browser.state, "BROWSER_STATE_STOPPED");
    assert.deepEqual(s.problems.errors, []);
  } finally {
    await s.context.close();
  }
});
