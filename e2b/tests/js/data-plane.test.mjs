// The unmodified `e2b` npm SDK (pinned in package.json) against Talon's
// E2B sandbox data plane (envd's services on E2B_SANDBOX_URL): commands,
// files, the streaming watcher and the PTY, over Connect's JSON.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CommandExitError, NotFoundError, Sandbox } from "e2b";

const live = Boolean(process.env.E2B_API_URL && process.env.E2B_SANDBOX_URL && process.env.E2B_API_KEY);
const until = async (cond, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
  return cond();
};

describe("e2b (npm) data plane on Talon", { skip: !live && "needs E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY" }, () => {
  let sbx;
  before(async () => {
    sbx = await Sandbox.create({ timeoutMs: 300_000, envs: { GREETING: "hi" } });
  });
  after(async () => {
    await sbx?.kill();
  });

  it("runs commands: output, callbacks, envs, cwd, user, exit codes", async () => {
    const out = [];
    const r = await sbx.commands.run('echo "$GREETING $EXTRA"; echo oops >&2; pwd; id -un', {
      envs: { EXTRA: "there" },
      onStdout: (d) => out.push(d),
    });
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "hi there\n/home/user\nuser\n");
    assert.equal(r.stderr, "oops\n");
    assert.equal(out.join(""), r.stdout);
    const root = await sbx.commands.run("pwd; id -un", { cwd: "/tmp", user: "root" });
    assert.equal(root.stdout, "/tmp\nroot\n");
    await assert.rejects(sbx.commands.run("exit 5"), (e) => e instanceof CommandExitError && e.exitCode === 5);
  });

  it("runs in the background: list, stdin, kill", async () => {
    const h = await sbx.commands.run("read line; echo got:$line; sleep 600", { background: true, stdin: true });
    let seen = "";
    const again = await sbx.commands.connect(h.pid, { onStdout: (d) => (seen += d) });
    assert.ok((await sbx.commands.list()).some((p) => p.pid === h.pid));
    await sbx.commands.sendStdin(h.pid, "ping\n");
    assert.ok(await until(() => seen.includes("got:ping")), seen);
    assert.equal(await sbx.commands.kill(h.pid), true);
    await assert.rejects(again.wait());
    assert.equal(await sbx.commands.kill(h.pid), false);
  });

  it("reads, writes and lists files", async () => {
    const d = `js-${randomUUID().slice(0, 6)}`;
    await sbx.files.write(`${d}/a.txt`, "alpha");
    assert.equal(await sbx.files.read(`${d}/a.txt`), "alpha");
    const bytes = new Uint8Array(70_000).map((_, i) => i % 251);
    await sbx.files.write(`/tmp/${d}.bin`, bytes.buffer);
    assert.deepEqual(new Uint8Array(await sbx.files.read(`/tmp/${d}.bin`, { format: "bytes" })), bytes);
    await sbx.files.write([
      { path: `${d}/sub/b.txt`, data: "beta" },
      { path: `${d}/sub/c.txt`, data: "gamma" },
    ]);
    assert.deepEqual((await sbx.files.list(d)).map((e) => e.name).sort(), ["a.txt", "sub"]);
    assert.ok((await sbx.files.list(d, { depth: 2 })).some((e) => e.path === `/home/user/${d}/sub/c.txt`));
    assert.equal(await sbx.files.exists(`${d}/nope`), false);
    assert.equal(await sbx.files.makeDir(`${d}/x/y`), true);
    assert.equal(await sbx.files.makeDir(`${d}/x/y`), false);
    await sbx.files.rename(`${d}/a.txt`, `${d}/moved.txt`);
    assert.equal((await sbx.files.getInfo(`${d}/moved.txt`)).size, 5);
    await sbx.files.remove(`${d}/sub`);
    await assert.rejects(sbx.files.read(`${d}/sub/b.txt`), NotFoundError);
  });

  it("watches a directory as a stream", async () => {
    const d = `/home/user/jw-${randomUUID().slice(0, 6)}`;
    await sbx.files.makeDir(d);
    const names = new Set();
    const w = await sbx.files.watchDir(d, (ev) => names.add(ev.name));
    try {
      await sbx.files.write(`${d}/x.txt`, "1");
      assert.ok(await until(() => names.has("x.txt")), [...names].join(","));
    } finally {
      await w.stop();
    }
  });

  it("signs file URLs and reaches a server's port", async () => {
    const path = `/home/user/js-signed-${randomUUID().slice(0, 6)}.txt`;
    const headers = { "E2b-Sandbox-Id": sbx.sandboxId };
    const form = new FormData();
    form.append("file", new Blob(["signed by js"]), "ignored");
    // Fetched as the SDK makes them, with no routing header: the
    // signature names the sandbox.
    const up = await fetch(await sbx.uploadUrl(path, { useSignatureExpiration: 60 }), { method: "POST", body: form });
    assert.equal(up.status, 200, await up.text());
    const down = await fetch(await sbx.downloadUrl(path, { useSignatureExpiration: 60 }));
    assert.equal(await down.text(), "signed by js");
    await sbx.files.write("/tmp/jsw/index.html", "js served");
    await sbx.commands.run("cd /tmp/jsw && python3 -m http.server 8010 --bind 127.0.0.1", { background: true });
    assert.ok(sbx.getHost(8010).startsWith(`8010-${sbx.sandboxId}`));
    let body = "";
    for (let i = 0; i < 50 && body !== "js served"; i++) {
      const r = await fetch(`${process.env.E2B_SANDBOX_URL}/index.html`, {
        headers: { ...headers, "E2b-Sandbox-Port": "8010", "X-Access-Token": sbx.envdAccessToken ?? "" },
      }).catch(() => null);
      if (r?.status === 200) body = await r.text();
      else await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(body, "js served");
  });

  it("drives a PTY: input, resize, kill", async () => {
    let out = "";
    const dec = new TextDecoder();
    const h = await sbx.pty.create({ rows: 24, cols: 80, onData: (d) => (out += dec.decode(d)), timeoutMs: 60_000 });
    await sbx.pty.resize(h.pid, { rows: 40, cols: 100 });
    await sbx.pty.sendInput(h.pid, new TextEncoder().encode("stty size; echo pty-$((6*7))\n"));
    assert.ok(await until(() => out.includes("pty-42")), out);
    assert.ok(out.includes("40 100"), out);
    assert.equal(await sbx.pty.kill(h.pid), true);
  });
});
