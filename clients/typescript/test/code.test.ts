// Code contexts through the TypeScript SDK against a live `talon up`
// (TALON_URL, TALON_API_KEY): JavaScript and Bash contexts keep their
// state, errors come back as data, interrupt stops a busy loop.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { InvalidArgumentError, NotFoundError, Sandbox } from "../src/index.js";

const live = Boolean(process.env.TALON_API_KEY);

describe("code contexts", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, () => {
  let sbx: Sandbox;
  before(async () => {
    sbx = await Sandbox.create("host", { timeoutMs: 600_000 });
  });
  after(async () => {
    await sbx?.kill();
  });

  it("JavaScript keeps state, streams output and reports errors", async () => {
    const ctx = await sbx.code.createContext({ language: "javascript" });
    assert.equal(ctx.language, "javascript");
    const seen: string[] = [];
    const x = await sbx.code.run("let k = 20; console.log('hi'); k + 1", { context: ctx, onStdout: (t) => seen.push(t) });
    assert.equal(x.text, "21");
    assert.deepEqual(seen, ["hi\n"]);
    assert.equal((await sbx.code.run("k * 2", { context: ctx })).text, "40");
    const bad = await sbx.code.run("JSON.parse('{')", { context: ctx });
    assert.equal(bad.error?.name, "SyntaxError");

    const running = sbx.code.run("while (true) {}", { context: ctx });
    await new Promise((r) => setTimeout(r, 1000));
    const t0 = Date.now();
    await sbx.code.interrupt(ctx);
    const stopped = await running;
    assert.ok(stopped.interrupted && Date.now() - t0 < 2000, JSON.stringify(stopped));
    assert.equal((await sbx.code.run("k", { context: ctx })).text, "20");

    await sbx.code.deleteContext(ctx);
    await assert.rejects(sbx.code.run("1", { context: ctx }), NotFoundError);
    await assert.rejects(sbx.code.createContext({ language: "cobol" as "bash" }), InvalidArgumentError);
  });

  it("Bash keeps variables and separates stderr", async () => {
    await sbx.code.run("X=7; cd /tmp", { language: "bash" });
    const x = await sbx.code.run("echo $X $PWD; echo e >&2", { language: "bash" });
    assert.equal(x.stdout, "7 /tmp\n");
    assert.equal(x.stderr, "e\n");
    assert.equal((await sbx.code.run("exit_status_test() { return 4; }; exit_status_test", { language: "bash" })).error?.value, "4");
  });
});
