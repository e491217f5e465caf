// The unmodified `e2b` npm SDK (pinned in package.json) against Talon's
// E2B-compatible control plane, configured only by E2B_API_KEY and
// E2B_API_URL. Calls that need the sandbox data plane are not here yet.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { NotFoundError, Sandbox } from "e2b";

const live = Boolean(process.env.E2B_API_URL && process.env.E2B_API_KEY);

describe("e2b (npm) on Talon", { skip: !live && "needs E2B_API_URL and E2B_API_KEY" }, () => {
  it("creates with metadata, reads info and metrics, sets the timeout, kills", async () => {
    const run = randomUUID().slice(0, 8);
    const sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { run }, envs: { GREETING: "hi" } });
    try {
      assert.match(sbx.sandboxId, /^[a-z0-9]+$/);
      const info = await sbx.getInfo();
      assert.deepEqual(info.metadata, { run });
      assert.equal(info.state, "running");
      const before = info.endAt;
      await sbx.setTimeout(600_000);
      assert.ok((await Sandbox.getInfo(sbx.sandboxId)).endAt > before);
      const m = await sbx.getMetrics();
      assert.ok(m.length === 1 && m[0].memTotal > 0 && m[0].cpuCount >= 1);
    } finally {
      assert.equal(await Sandbox.kill(sbx.sandboxId), true);
    }
    assert.equal(await Sandbox.kill(sbx.sandboxId), false);
    await assert.rejects(Sandbox.getInfo(sbx.sandboxId), NotFoundError);
  });

  it("lists by metadata and state, page by page; pause and connect resume", async () => {
    const run = randomUUID().slice(0, 8);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await Sandbox.create({ timeoutMs: 120_000, metadata: { run } }));
    try {
      assert.equal(await Sandbox.pause(made[0].sandboxId), true);
      const p = Sandbox.list({ query: { metadata: { run } }, limit: 2 });
      const seen = [];
      while (p.hasNext) seen.push(...(await p.nextItems()).map((s) => s.sandboxId));
      assert.deepEqual(seen.sort(), made.map((s) => s.sandboxId).sort());
      const paused = await Sandbox.list({ query: { metadata: { run }, state: ["paused"] } }).nextItems();
      assert.deepEqual(paused.map((s) => s.sandboxId), [made[0].sandboxId]);
      await Sandbox.connect(made[0].sandboxId, { timeoutMs: 300_000 });
      assert.equal((await Sandbox.getInfo(made[0].sandboxId)).state, "running");
    } finally {
      for (const s of made) await Sandbox.kill(s.sandboxId);
    }
  });
});
