// Agent runs through the TypeScript SDK against a live `talon up`
// (TALON_URL, TALON_API_KEY; scripts/test.sh starts one).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Sandbox, type AgentEvent } from "../src/index.js";

const live = Boolean(process.env.TALON_API_KEY);

describe("agent runs", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, () => {
  let sbx: Sandbox;
  before(async () => {
    sbx = await Sandbox.create("host", { memoryMib: 256, timeoutMs: 600_000 });
  });
  after(async () => {
    await sbx?.kill();
  });

  it("streams a run in order, follows it again by id, and cancels", async () => {
    const d = randomUUID().slice(0, 6);
    await sbx.files.makeDir(`/workspace/${d}`);
    const seen: AgentEvent[] = [];
    const script = `read t; echo "ts: $t"; echo 1 > /workspace/${d}/a.txt`;
    const run = await sbx.agent.run(["/bin/sh", "-c", script], { prompt: "go\n", onEvent: (e) => void seen.push(e) });
    assert.equal(run.exitCode, 0);
    assert.deepEqual(run.events.map((e) => e.seq), run.events.map((_, i) => i + 1));
    assert.deepEqual(seen, run.events);
    assert.deepEqual(run.events.map((e) => e.kind), ["started", "output", "fileChange", "completed"]);
    assert.ok(run.events.some((e) => e.kind === "output" && e.text === "ts: go"));
    assert.ok(run.events.some((e) => e.kind === "fileChange" && e.path === `/workspace/${d}/a.txt` && e.change === "create"));
    const again = await sbx.agent.connect(run.runId, { afterSeq: 1 });
    assert.deepEqual(again.events, run.events.slice(1));

    let runId = "";
    const long = sbx.agent.run("sleep 60", { onEvent: (e) => { if (e.kind === "started") runId = e.runId; } });
    for (let i = 0; i < 100 && !runId; i++) await new Promise((r) => setTimeout(r, 100));
    await sbx.agent.cancel(runId);
    const cancelled = await long;
    assert.notEqual(cancelled.exitCode, 0);
  });
});
