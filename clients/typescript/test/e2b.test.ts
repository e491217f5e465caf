// The surface agent builders know from E2B's SDK, against a live `talon up`
// (TALON_URL, TALON_API_KEY; scripts/test.sh starts one).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  CommandExitError,
  CommandTimeoutError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  Sandbox,
  TalonError,
  type FilesystemEvent,
} from "../src/index.js";

const live = Boolean(process.env.TALON_API_KEY);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the E2B-shaped surface", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, () => {
  let sbx: Sandbox;
  const run = randomUUID().slice(0, 8);
  before(async () => {
    sbx = await Sandbox.create("host", { metadata: { suite: "e2b", run }, memoryMib: 256, timeoutMs: 600_000 });
  });
  after(async () => {
    await sbx?.kill();
  });

  it("creates with metadata, an idempotency key, network and onTimeout", async () => {
    const i = await sbx.getInfo();
    assert.deepEqual([i.metadata.run, i.templateId], [run, "host"]);
    assert.ok(i.startedAt && i.endAt && i.endAt > i.startedAt);
    const key = `ts-${randomUUID()}`;
    const a = await Sandbox.create({ idempotencyKey: key, memoryMib: 128, onTimeout: "kill", allowInternetAccess: false });
    try {
      const b = await Sandbox.create({ idempotencyKey: key, memoryMib: 128, onTimeout: "kill", allowInternetAccess: false });
      assert.equal(b.sandboxId, a.sandboxId);
      // The key with another request is refused, never answered with a's sandbox.
      await assert.rejects(Sandbox.create({ idempotencyKey: key, memoryMib: 256 }), /idempotency key/);
      const raw = (await a.getInfo()).raw;
      assert.deepEqual([raw.networkPolicy?.mode, raw.timeoutAction], ["EGRESS_MODE_SEALED", "TIMEOUT_ACTION_DELETE"]);
    } finally {
      await a.kill();
    }
    const c = await Sandbox.create({ memoryMib: 128, network: { allowOut: ["1.1.1.1", "pypi.org"], denyOut: ["0.0.0.0/0"] } });
    try {
      const p = (await c.getInfo()).raw.networkPolicy;
      assert.deepEqual([p?.allowCidrs, p?.allowDomains], [["1.1.1.1/32"], ["pypi.org"]]);
    } finally {
      await c.kill();
    }
    await assert.rejects(Sandbox.create({ network: { denyOut: ["8.8.8.8"] } }), InvalidArgumentError);
  });

  it("lists by metadata and state, with paging", async () => {
    const mine = await Sandbox.list({ query: { metadata: { run } } });
    assert.deepEqual(mine.sandboxes.map((s) => s.sandboxId), [sbx.sandboxId]);
    assert.equal((await Sandbox.list({ query: { metadata: { run }, state: ["paused"] } })).sandboxes.length, 0);
    await assert.rejects(Sandbox.list({ query: { state: ["sleeping"] } }), InvalidArgumentError);
    const page = `p-${run}`;
    const extra = await Promise.all([1, 2, 3].map(() => Sandbox.create({ metadata: { page }, memoryMib: 64, wait: false })));
    try {
      const seen: string[] = [];
      let token = "";
      let pages = 0;
      do {
        const r = await Sandbox.list({ query: { metadata: { page } }, limit: 2, nextToken: token });
        seen.push(...r.sandboxes.map((s) => s.sandboxId));
        token = r.nextToken;
        pages++;
      } while (token);
      assert.deepEqual(seen.sort(), extra.map((s) => s.sandboxId).sort());
      assert.equal(pages, 2);
    } finally {
      for (const s of extra) await Sandbox.kill(s.sandboxId);
    }
  });

  it("connects resuming a paused sandbox, refuses a deleted one, kills by id", async () => {
    const s = await Sandbox.create({ memoryMib: 128 });
    await s.pause();
    assert.equal((await Sandbox.getInfo(s.sandboxId)).state, "paused");
    const again = await Sandbox.connect(s.sandboxId, { timeoutMs: 120_000 });
    assert.ok(await again.isRunning());
    assert.equal((await again.commands.run("echo back")).stdout, "back\n");
    assert.equal(await Sandbox.kill(s.sandboxId), true);
    await assert.rejects(Sandbox.connect(s.sandboxId), NotFoundError);
    assert.equal(await Sandbox.kill("sbx_" + "a".repeat(26)), false);
  });

  it("sets the timeout and reads metrics", async () => {
    const before = (await sbx.getInfo()).endAt!;
    await sbx.setTimeout(900_000);
    assert.ok((await sbx.getInfo()).endAt! > before);
    const [m] = await sbx.getMetrics();
    assert.ok(m.cpuCount >= 1 && m.cpuUsedPct >= 0 && m.cpuUsedPct <= 100);
    assert.ok(m.memUsed > 0 && m.memTotal === 256 * 1024 * 1024);
    assert.ok(m.diskUsed > 0 && m.diskUsed < m.diskTotal);
  });

  it("throws on exit codes and timeouts, and disconnects", async () => {
    await assert.rejects(sbx.commands.run("echo partial; exit 7"), (e: unknown) => {
      return e instanceof CommandExitError && e.exitCode === 7 && e.stdout === "partial\n";
    });
    await assert.rejects(sbx.commands.run("sleep 10", { timeoutMs: 500 }), CommandTimeoutError);
    assert.equal((await sbx.commands.run("sleep 1.2; echo slow", { timeoutMs: 0 })).stdout, "slow\n");
    const h = await sbx.commands.run("for i in 1 2 3 4; do echo $i; sleep 0.3; done", { background: true });
    await sleep(400);
    await h.disconnect();
    await assert.rejects(h.wait(), TalonError);
    assert.equal((await (await sbx.commands.connect(h.pid)).wait()).stdout, "1\n2\n3\n4\n");
    assert.equal((await sbx.commands.run("id -un; pwd", { user: "user", cwd: "/home/user" })).stdout, "user\n/home/user\n");
  });

  it("does files as a user, in batches and as streams", async () => {
    const infos = await sbx.files.write([
      { path: "batch/a.txt", data: "a" },
      { path: "batch/b.bin", data: new Uint8Array([0, 1]) },
    ]);
    assert.deepEqual(infos.map((i) => i.size), [1, 2]);
    assert.equal((await sbx.files.writeFiles([{ path: "batch/c.txt", data: "ccc" }]))[0].size, 3);
    const big = new Uint8Array(3 << 20).map((_, i) => (i * 7) & 255);
    await sbx.files.write("batch/big.bin", big);
    let total = 0;
    let chunks = 0;
    const reader = (await sbx.files.read("batch/big.bin", { format: "stream" })).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      total += r.value.length;
      chunks++;
    }
    assert.ok(total === big.length && chunks > 1);
    assert.equal((await sbx.files.read("batch/c.txt", { format: "blob" })).size, 3);
    await sbx.files.write("/home/user/mine.txt", "mine", { user: "user" });
    assert.equal((await sbx.commands.run("stat -c %U /home/user/mine.txt")).stdout, "user\n");
    assert.equal((await sbx.files.getInfo("/home/user/mine.txt", { user: "user" })).size, 4);
    await sbx.files.write("secret.txt", "s", { mode: 0o600 });
    await assert.rejects(sbx.files.read("secret.txt", { user: "user" }), PermissionDeniedError);
    await sbx.files.makeDir("/home/user/d", { user: "user" });
    await sbx.files.rename("/home/user/d", "/home/user/e", { user: "user" });
    assert.deepEqual(await sbx.files.list("/home/user/e", { user: "user" }), []);
    await sbx.files.remove("/home/user/e", { user: "user" });
    assert.equal(await sbx.files.exists("/home/user/e", { user: "user" }), false);
  });

  it("watches a directory, by callback and by polling", async () => {
    await sbx.files.makeDir("polled");
    const called: FilesystemEvent[] = [];
    const w = await sbx.files.watchDir("polled", (e) => {
      called.push(e);
    });
    try {
      await sbx.files.write("polled/x.txt", "x");
      let polled: FilesystemEvent[] = [];
      for (let i = 0; i < 50 && !polled.some((e) => e.path.endsWith("/x.txt")); i++) {
        polled = polled.concat(w.getNewEvents());
        await sleep(100);
      }
      assert.ok(polled.some((e) => e.path.endsWith("/x.txt") && e.type === "write"), JSON.stringify(polled));
      assert.ok(called.some((e) => e.path.endsWith("/x.txt")));
    } finally {
      await w.stop();
    }
  });

  it("signs file URLs that need no other credential", async () => {
    const up = await sbx.uploadUrl("signed/in.txt", { ttlMs: 60_000 });
    const r = await fetch(up, { method: "POST", body: "uploaded", headers: { "content-type": "application/octet-stream" } });
    assert.equal(r.status, 200, await r.text());
    const down = await sbx.downloadUrl("signed/in.txt");
    assert.equal(await (await fetch(down)).text(), "uploaded");
    const other = down.replace("path=signed/in.txt", "path=signed/other.txt");
    assert.notEqual(other, down);
    assert.equal((await fetch(other)).status, 403);
  });

  it("drives a PTY by pid, and gives a host URL", async () => {
    let screen = "";
    const p = await sbx.pty.create({
      cols: 90,
      rows: 20,
      user: "user",
      timeoutMs: 30_000,
      cmd: ["bash", "-c", "read x; stty size; echo got $x; whoami"],
      onData: (d) => (screen += d),
    });
    await sbx.pty.resize(p.pid, { cols: 120, rows: 33 });
    await sbx.pty.sendInput(p.pid, "hi\n");
    const again = await sbx.pty.connect(p.pid);
    assert.equal((await p.wait()).exitCode, 0);
    assert.ok(screen.includes("33 120") && screen.includes("got hi") && screen.includes("user"), screen);
    assert.ok((await again.wait()).stdout.includes("got hi"));
    const long = await sbx.pty.create({ cmd: ["sleep", "60"] });
    await sbx.pty.kill(long.pid);
    await assert.rejects(long.wait(), CommandExitError);
    const url = await sbx.getHost(3000);
    assert.ok(url.startsWith("http") && url.includes("token=") && url.includes(sbx.sandboxId), url);
  });
});
