// Conformance adapter for the TypeScript SDK (its built dist/): runs each
// case's steps and writes what it observed. The runner judges.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import {
  CommandExitError,
  CommandTimeoutError,
  Sandbox,
  TalonError,
  whoami,
} from "../../../clients/typescript/dist/src/index.js";

/** A command's result, also when it ended non-zero or timed out (the SDK throws then, the result attached). */
async function finished(p) {
  try {
    return await p;
  } catch (e) {
    if (e instanceof CommandExitError || e instanceof CommandTimeoutError) return e.result;
    throw e;
  }
}

const KEYS = {
  undefined: process.env.TALON_API_KEY,
  viewer: process.env.TALON_VIEWER_KEY,
  alt: process.env.TALON_ALT_KEY,
  invalid: "tln_invalid0_" + "x".repeat(32),
};

function generate({ size, seed }) {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = Number(((BigInt(i) * 2654435761n + BigInt(seed)) & 0xffffffffn) >> 24n);
  return out;
}

class Case {
  slots = {};

  async sandbox(a) {
    const s = this.slots[a.slot ?? "a"];
    return a.key === undefined ? s : Sandbox.connect(s.sandboxId, { apiKey: KEYS[a.key] });
  }

  async step(op, a) {
    const apiKey = KEYS[a.key];
    switch (op) {
      case "create": {
        const s = await Sandbox.create({
          image: a.image ?? "host", envs: a.envs, cpuMillis: 250, memoryMib: 256, apiKey,
          metadata: a.metadata, idempotencyKey: a.idempotency_key, isolation: a.isolation,
        });
        const same = Object.entries(this.slots).find(([, o]) => o.sandboxId === s.sandboxId)?.[0] ?? "";
        this.slots[a.slot ?? "a"] = s;
        const info = await s.getInfo();
        return { sandbox_id: s.sandboxId, state: info.state, same_as: same, isolation: info.isolation };
      }
      case "list_filtered": {
        const ids = new Set();
        let token = "";
        do {
          const r = await Sandbox.list({ query: { metadata: a.metadata, state: a.states }, nextToken: token, apiKey });
          r.sandboxes.forEach((s) => ids.add(s.sandboxId));
          token = r.nextToken;
        } while (token);
        return { slots: Object.entries(this.slots).filter(([, o]) => ids.has(o.sandboxId)).map(([n]) => n).sort() };
      }
      case "connect": {
        const s = await Sandbox.connect(this.slots[a.slot ?? "a"].sandboxId, { apiKey });
        return { state: (await s.getInfo()).state };
      }
      case "agent_run": {
        const s = await this.sandbox(a);
        const run = await s.agent.run(a.cmd, { prompt: a.prompt ?? "" });
        const again = await s.agent.connect(run.runId, { afterSeq: 1 });
        const kinds = run.events.map((e) => (e.kind === "fileChange" ? "file_change" : e.kind));
        return {
          kinds,
          output: run.events.filter((e) => e.kind === "output").map((e) => e.text + "\n").join(""),
          file_changes: run.events.filter((e) => e.kind === "fileChange").map((e) => `${e.change} ${e.path}`),
          exit_code: run.exitCode,
          replay_matches: JSON.stringify(again.events.map((e) => e.seq)) === JSON.stringify(run.events.slice(1).map((e) => e.seq)),
        };
      }
      case "browser": {
        const s = await this.sandbox(a);
        const b = await s.browser.start({ windowSize: a.window_size });
        const version = await (await fetch(b.cdpUrl + "/json/version")).json();
        const png = await s.browser.screenshot();
        const stopped = await s.browser.stop();
        return {
          state: b.state,
          window_size: b.windowSize,
          cdp_url_names_sandbox: b.cdpUrl.includes(`/cdp/${s.sandboxId}/`),
          version_ws_matches: version.webSocketDebuggerUrl === b.websocketDebuggerUrl,
          loopback_hidden: !JSON.stringify(version).includes("127.0.0.1:9222"),
          png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => png[i] === x),
          stopped_state: stopped.state,
          stopped_cdp_url: stopped.cdpUrl,
        };
      }
      case "code": {
        const s = await this.sandbox(a);
        const ctx = await s.code.createContext({ language: a.language });
        const runs = [];
        for (const c of a.runs) runs.push(await s.code.run(c, { context: ctx }));
        await s.code.deleteContext(ctx);
        return {
          texts: runs.map((x) => x.text ?? ""),
          stdouts: runs.map((x) => x.stdout),
          errors: runs.map((x) => x.error?.name ?? ""),
        };
      }
      case "metrics": {
        const [m] = await (await this.sandbox(a)).getMetrics();
        return {
          cpu_count: m.cpuCount, mem_total_mib: m.memTotal / 1048576,
          mem_used_positive: m.memUsed > 0, disk_used_positive: m.diskUsed > 0,
        };
      }
      case "file_url": {
        const s = await this.sandbox(a);
        const r = a.operation === "write"
          ? await fetch(await s.uploadUrl(a.path), {
            method: "POST", body: a.text, headers: { "content-type": "application/octet-stream" },
          })
          : await fetch(await s.downloadUrl(a.path));
        const text = await r.text();
        return a.operation === "read" ? { status: r.status, text } : { status: r.status };
      }
      case "get": {
        const id = a.sandbox_id ?? this.slots[a.slot ?? "a"].sandboxId;
        return { state: (await Sandbox.getInfo(id, { apiKey })).state };
      }
      case "pause":
      case "resume":
      case "kill":
        await (await this.sandbox(a))[op]();
        return {};
      case "list_all": {
        const ids = [];
        let token, pages = 0;
        do {
          const r = await Sandbox.list({ pageSize: a.page_size, pageToken: token, apiKey });
          ids.push(...r.sandboxes.map((s) => s.sandboxId));
          token = r.nextPageToken;
          pages++;
        } while (token);
        const created = Object.values(this.slots).map((s) => s.sandboxId);
        return { all_created_listed: created.every((c) => ids.includes(c)), unique: new Set(ids).size === ids.length, pages };
      }
      case "run": {
        const r = await finished((await this.sandbox(a)).commands.run(a.cmd, {
          envs: a.envs, cwd: a.cwd, timeoutMs: a.timeout_s ? a.timeout_s * 1000 : 0, stdin: a.stdin,
        }));
        return { stdout: r.stdout, stderr: r.stderr, exit_code: r.exitCode, signal: r.signal, timed_out: r.timedOut };
      }
      case "run_bg": {
        const h = await (await this.sandbox(a)).commands.run(a.cmd, { background: true, tag: a.tag });
        return { pid: h.pid };
      }
      case "reconnect": {
        const r = await finished((await (await this.sandbox(a)).commands.connect({ tag: a.tag })).wait());
        return { stdout: r.stdout, stderr: r.stderr, exit_code: r.exitCode, signal: r.signal };
      }
      case "signal": {
        const s = await this.sandbox(a);
        await s.commands.kill(0, { tag: a.tag, signal: a.signal });
        return {};
      }
      case "pty": {
        let output = "";
        const p = await (await this.sandbox(a)).pty.create({
          cols: a.cols ?? 80, rows: a.rows ?? 24, cmd: a.cmd, onData: (d) => (output += d),
        });
        await p.sendStdin(a.input);
        const r = await finished(p.wait());
        return { output, exit_code: r.exitCode };
      }
      case "write": {
        const data = a.generate ? generate(a.generate) : a.text;
        return { size: (await (await this.sandbox(a)).files.write(a.path, data, { user: a.user })).size };
      }
      case "read": {
        const data = await (await this.sandbox(a)).files.read(a.path, { format: "bytes", user: a.user });
        const r = { size: data.length, sha256: createHash("sha256").update(data).digest("hex") };
        try {
          r.text = new TextDecoder("utf-8", { fatal: true }).decode(data);
        } catch {
          /* binary */
        }
        return r;
      }
      case "list_dir":
        return { names: (await (await this.sandbox(a)).files.list(a.path)).map((f) => f.name).sort() };
      case "stat": {
        const f = await (await this.sandbox(a)).files.stat(a.path);
        return { size: f.size, type: f.type };
      }
      case "mkdir":
        await (await this.sandbox(a)).files.makeDir(a.path);
        return {};
      case "move":
        await (await this.sandbox(a)).files.rename(a.from, a.to);
        return {};
      case "remove":
        await (await this.sandbox(a)).files.remove(a.path, a.recursive ?? false);
        return {};
      case "exists":
        return { exists: await (await this.sandbox(a)).files.exists(a.path) };
      case "preview_token": {
        const s = await this.sandbox(a);
        const r = await s.previewToken(a.port, a.ttl_s ? a.ttl_s * 1000 : undefined);
        return { url: r.url ?? "", token_present: Boolean(r.token), url_names_sandbox: (r.url ?? "").includes(s.sandboxId) };
      }
      case "whoami":
        return { tenant_id: (await whoami({ apiKey })).tenantId ?? "" };
    }
    throw new Error(`unknown op ${op}`);
  }

  async cleanup() {
    for (const s of Object.values(this.slots)) await s.kill().catch(() => {});
  }
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = {};
for (const c of cases) {
  const k = new Case();
  const out = [];
  for (const st of c.steps) {
    try {
      out.push(await k.step(st.op, st.args ?? {}));
    } catch (e) {
      out.push(e instanceof TalonError ? { error: e.code, message: e.message } : { error: "ADAPTER", message: String(e) });
    }
  }
  await k.cleanup();
  results[c.name] = out;
}
writeFileSync(process.argv[3], JSON.stringify(results, null, 1));
