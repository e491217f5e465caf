// The TypeScript SDK against a live `talon up` (TALON_URL, TALON_API_KEY;
// scripts/test.sh starts one).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  AlreadyExistsError,
  AuthenticationError,
  CommandExitError,
  CommandTimeoutError,
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  Sandbox,
  UnavailableError,
} from "../src/index.js";

const live = Boolean(process.env.TALON_API_KEY);

describe("Sandbox", { skip: !live && "needs TALON_URL and TALON_API_KEY" }, () => {
  let sbx: Sandbox;
  before(async () => {
    sbx = await Sandbox.create({ memoryMib: 256 });
  });
  after(async () => {
    await sbx?.kill();
  });

  it("goes to the next of several servers when one is gone", async () => {
    // Nothing listens on port 2: requests go to the next server, and stay.
    const live = process.env.TALON_URL ?? "http://127.0.0.1:8080";
    const both = `http://127.0.0.1:2,${live}/`;
    const s = await Sandbox.create({ memoryMib: 128, baseUrl: both });
    try {
      assert.equal((await s.commands.run("echo via-next")).stdout, "via-next\n");
    } finally {
      await s.kill();
    }
    await assert.rejects(Sandbox.list({ baseUrl: "http://127.0.0.1:2,http://127.0.0.1:3" }), UnavailableError);
    await assert.rejects(Sandbox.list({ baseUrl: `${live},` }), InvalidArgumentError);
  });

  it("creates and waits until running", async () => {
    assert.match(sbx.sandboxId, /^sbx_/);
    assert.equal((await sbx.getInfo()).state, "running");
    const { sandboxes } = await Sandbox.list({ pageSize: 500 });
    assert.ok(sandboxes.some((s) => s.sandboxId === sbx.sandboxId));
  });

  it("runs a command: stdout, stderr, exit code", async () => {
    const r = await sbx.commands.run("echo hi; echo err >&2");
    assert.deepEqual([r.stdout, r.stderr, r.exitCode], ["hi\n", "err\n", 0]);
    // A non-zero exit throws, with the result attached.
    await assert.rejects(sbx.commands.run("echo hi; echo err >&2; exit 3"), (e: unknown) => {
      assert.ok(e instanceof CommandExitError);
      assert.deepEqual([e.stdout, e.stderr, e.exitCode, e.result.exitCode], ["hi\n", "err\n", 3, 3]);
      return true;
    });
  });

  it("passes env, cwd, unicode and streams callbacks", async () => {
    const seen: string[] = [];
    const r = await sbx.commands.run("echo $G; pwd; echo ünïcødé ✓", {
      envs: { G: "hallo" },
      cwd: "/tmp",
      onStdout: (d) => seen.push(d),
    });
    assert.equal(r.stdout, "hallo\n/tmp\nünïcødé ✓\n");
    assert.equal(seen.join(""), r.stdout);
  });

  it("takes stdin and honours a timeout", async () => {
    assert.equal((await sbx.commands.run(["cat"], { stdin: "ping\n" })).stdout, "ping\n");
    await assert.rejects(sbx.commands.run("echo before; sleep 30", { timeoutMs: 1000 }), (e: unknown) => {
      assert.ok(e instanceof CommandTimeoutError && e.result.timedOut && e.result.stdout === "before\n");
      return true;
    });
  });

  it("reattaches to a background process by tag", async () => {
    const h = await sbx.commands.run("for i in 1 2 3; do echo $i; sleep 0.1; done", {
      background: true,
      tag: "count",
    });
    assert.ok(h.pid > 0);
    const again = await sbx.commands.connect({ tag: "count" });
    assert.equal((await again.wait()).stdout, "1\n2\n3\n");
    assert.equal((await h.wait()).exitCode, 0);
  });

  it("kills a background process", async () => {
    const h = await sbx.commands.run("sleep 60", { background: true });
    await h.kill();
    await assert.rejects(h.wait(), (e: unknown) => e instanceof CommandExitError && e.result.signal === 9);
  });

  it("does files", async () => {
    const data = new Uint8Array(1 << 20).map((_, i) => (i * 31) & 0xff);
    assert.equal((await sbx.files.write("bin/d.bin", data)).size, data.length);
    assert.deepEqual(await sbx.files.read("bin/d.bin", { format: "bytes" }), data);
    assert.deepEqual((await sbx.files.list("bin")).map((f) => f.name), ["d.bin"]);
    await sbx.files.rename("bin/d.bin", "bin/e.bin");
    assert.equal(await sbx.files.exists("bin/d.bin"), false);
    await sbx.files.makeDir("made/deep");
    assert.equal((await sbx.files.stat("made/deep")).type, "dir");
    await sbx.files.remove("bin", true);
    await assert.rejects(sbx.files.read("bin/e.bin"), NotFoundError);
    await assert.rejects(sbx.files.read("../../etc/passwd"), PermissionDeniedError);
  });

  it("watches a directory", async () => {
    await sbx.files.makeDir("watched");
    const ctl = new AbortController();
    const seen: { type: string; path: string }[] = [];
    const done = (async () => {
      try {
        for await (const e of sbx.files.watch("watched", { signal: ctl.signal })) {
          seen.push(e);
          if (e.path.endsWith("/a.txt") && e.type === "write") break;
        }
      } catch {
        /* aborted */
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await sbx.files.write("watched/a.txt", "x");
    await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
    ctl.abort();
    assert.ok(seen.some((e) => e.path.endsWith("/a.txt") && e.type === "write"), JSON.stringify(seen));
  });

  it("runs a PTY", async () => {
    let screen = "";
    const p = await sbx.pty.create({ cols: 100, rows: 40, cmd: ["sh"], onData: (d) => (screen += d) });
    await p.sendStdin("stty size; echo $((6*7)); exit\n");
    assert.equal((await p.wait()).exitCode, 0);
    assert.ok(screen.includes("40 100") && screen.includes("42"), screen);
  });

  it("gives a signed preview link that a plain client opens", async () => {
    await sbx.files.write("site/index.html", "<h1>previewed</h1>");
    await sbx.commands.run("cd /workspace/site && python3 -m http.server 8127 >/dev/null 2>&1", { background: true });
    await sbx.commands.run(
      "for i in $(seq 1 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8127))' 2>/dev/null && exit 0; sleep 0.05; done; exit 1",
    );
    const url = await sbx.previewUrl(8127);
    assert.match(url, /token=/);
    if (/\/\/(127\.0\.0\.1|localhost)[:/]/.test(process.env.TALON_URL ?? "")) {
      assert.ok(url.includes(`-${sbx.sandboxId}.localhost:`), url);
    }
    // Node's fetch keeps no cookies across a redirect: served at once.
    const r = await fetch(await sbx.previewUrl(8127, { path: true }));
    assert.equal(r.status, 200);
    assert.equal(await r.text(), "<h1>previewed</h1>");
    assert.equal((await fetch(sbx.previewAddress(8127))).status, 401);
  });

  it("gives typed errors", async () => {
    await assert.rejects(Sandbox.connect("sbx_doesnotexist"), NotFoundError);
    await assert.rejects(Sandbox.list({ apiKey: "tln_invalid0_xxxxxxxxxxxxxxxxxxxxxxxxxxxx" }), AuthenticationError);
  });

  it("pauses, resumes and kills", async () => {
    const s = await Sandbox.create({ memoryMib: 128 });
    await s.pause();
    assert.equal((await s.getInfo()).state, "paused");
    await s.resume();
    assert.equal((await s.commands.run("true")).exitCode, 0);
    await s.kill();
    assert.equal((await s.getInfo()).state, "deleted");
    await assert.rejects(s.commands.run("true"), FailedPreconditionError);
  });

  it("runs a gvisor sandbox under its own kernel", async () => {
    const s = await Sandbox.create({ isolation: "gvisor", memoryMib: 128 });
    try {
      assert.equal((await s.getInfo()).isolation, "gvisor");
      assert.match((await s.commands.run("cat /proc/version")).stdout, /gvisor/);
    } finally {
      await s.kill();
    }
    await assert.rejects(
      Sandbox.create({ isolation: "vm" as unknown as "gvisor" }),
      InvalidArgumentError,
    );
  });

  it("snapshots, creates from a snapshot and forks", async () => {
    const src = await Sandbox.create({ memoryMib: 128 });
    try {
      await src.files.write("/workspace/state.txt", "kept");
      const snap = await src.createSnapshot();
      assert.match(snap.snapshotId, /^snp_/);
      assert.equal(snap.sandboxId, src.sandboxId);
      const { snapshots } = await Sandbox.listSnapshots({ sandboxId: src.sandboxId });
      assert.ok(snapshots.some((x) => x.snapshotId === snap.snapshotId));
      await assert.rejects(src.createSnapshot(snap.name), AlreadyExistsError);
      const again = await Sandbox.create({ snapshotId: snap.snapshotId, memoryMib: 128 });
      assert.equal((await again.getInfo()).snapshotId, snap.snapshotId);
      assert.equal(await again.files.read("/workspace/state.txt"), "kept");
      await again.kill();
      const forks = await src.fork(2);
      assert.equal(new Set([src.sandboxId, ...forks.map((f) => f.sandboxId)]).size, 3);
      await forks[0].files.write("/workspace/state.txt", "changed");
      assert.equal(await forks[1].files.read("/workspace/state.txt"), "kept");
      for (const f of forks) await f.kill();
      await Sandbox.deleteSnapshot(snap.snapshotId);
      await assert.rejects(Sandbox.getSnapshot(snap.snapshotId), NotFoundError);
    } finally {
      await src.kill();
    }
  });
});
