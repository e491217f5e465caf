/**
 * Processes in a sandbox: `sandbox.commands` starts, follows and signals
 * them; a CommandHandle gathers one's output from its NDJSON event stream.
 */
import { CommandExitError, CommandTimeoutError, TalonError, errorFrom } from "./errors.js";
import type { Sandbox } from "./sandbox.js";
import { b64, bytes, ndjson, seconds } from "./transport.js";

/** A finished command's result, or the error it stands for. */
function finish(r: CommandResult, timeoutMs?: number): CommandResult {
  if (r.timedOut) throw new CommandTimeoutError(r, timeoutMs ?? 0);
  if (r.exitCode !== 0 || r.signal) throw new CommandExitError(r);
  return r;
}

/** Foreground commands are killed after this long unless `timeoutMs` says otherwise (0: no limit). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

export interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  signal: number;
  timedOut: boolean;
  pid: number;
}

export interface RunOptions {
  envs?: Record<string, string>;
  cwd?: string;
  user?: string;
  /**
   * Kill the process after this long: 60 s by default for a foreground
   * command (0: no limit), no limit for a background one unless given.
   */
  timeoutMs?: number;
  /** A tag to reattach by (`commands.connect({ tag })`). */
  tag?: string;
  /** Bytes for stdin, closed after. */
  stdin?: string | Uint8Array;
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
}

type ProcessEvent =
  | { kind: "started"; pid: number }
  | { kind: "stdout" | "stderr"; data: Uint8Array; seq: number }
  | { kind: "exited"; exitCode: number; signal: number; timedOut: boolean };

function eventOf(line: Record<string, unknown>): ProcessEvent | undefined {
  if (line.error) {
    const e = line.error as { code?: number };
    throw errorFrom(0, e);
  }
  const ev = (line.event ?? line) as Record<string, Record<string, unknown> | undefined>;
  if (ev.started) return { kind: "started", pid: Number(ev.started.pid ?? 0) };
  if (ev.output) {
    const kind = ev.output.stream === "OUTPUT_STREAM_STDERR" ? "stderr" : "stdout";
    return { kind, data: b64(String(ev.output.data ?? "")), seq: Number(ev.output.seq ?? 0) };
  }
  if (ev.exited) {
    return {
      kind: "exited",
      exitCode: Number(ev.exited.exitCode ?? 0),
      signal: Number(ev.exited.signal ?? 0),
      timedOut: Boolean(ev.exited.timedOut),
    };
  }
  return undefined;
}

/** Gathers a process's output; `done` resolves with its result. */
export class CommandHandle {
  pid = 0;
  private out: Uint8Array[] = [];
  private err: Uint8Array[] = [];
  private lastSeq = 0;
  private exit?: Extract<ProcessEvent, { kind: "exited" }>;
  private readonly started: Promise<void>;
  private readonly done: Promise<CommandResult>;
  private disconnected = false;
  /** @internal */ abort?: AbortController;
  /** @internal */ timeoutMs?: number;

  constructor(
    private readonly sandbox: Sandbox,
    events: AsyncGenerator<ProcessEvent>,
    private readonly opts: Pick<RunOptions, "onStdout" | "onStderr"> = {},
    readonly tag?: string,
  ) {
    let markStarted!: () => void;
    this.started = new Promise((r) => (markStarted = r));
    this.done = (async () => {
      try {
        for await (const e of events) {
          this.add(e);
          if (this.pid || e.kind === "exited") markStarted();
        }
      } finally {
        markStarted();
      }
      return this.result();
    })();
    this.done.catch(() => undefined);
  }

  /** Resolves once the process is known to run (its pid is set). */
  async ready(): Promise<this> {
    await Promise.race([this.started, this.done]);
    return this;
  }

  private add(e: ProcessEvent): void {
    const dec = new TextDecoder();
    if (e.kind === "started") this.pid = e.pid;
    else if (e.kind === "exited") this.exit = e;
    else {
      if (e.seq && e.seq <= this.lastSeq) return;
      this.lastSeq = Math.max(this.lastSeq, e.seq);
      (e.kind === "stdout" ? this.out : this.err).push(e.data);
      const cb = e.kind === "stdout" ? this.opts.onStdout : this.opts.onStderr;
      cb?.(dec.decode(e.data));
    }
  }

  /** The output so far. */
  get stdout(): string {
    return this.joined(this.out);
  }

  get stderr(): string {
    return this.joined(this.err);
  }

  private joined(parts: Uint8Array[]): string {
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      all.set(p, o);
      o += p.length;
    }
    return new TextDecoder().decode(all);
  }

  private result(): CommandResult {
    const join = (parts: Uint8Array[]) => {
      const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let o = 0;
      for (const p of parts) {
        all.set(p, o);
        o += p.length;
      }
      return new TextDecoder().decode(all);
    };
    const x = this.exit ?? { exitCode: -1, signal: 0, timedOut: false };
    return {
      stdout: join(this.out),
      stderr: join(this.err),
      exitCode: x.exitCode,
      signal: x.signal,
      timedOut: x.timedOut,
      pid: this.pid,
    };
  }

  /**
   * The result once the process ends; throws CommandExitError on a
   * non-zero exit and CommandTimeoutError when its timeout killed it.
   */
  async wait(): Promise<CommandResult> {
    if (this.disconnected) {
      throw new TalonError("this handle was disconnected; commands.connect(pid) follows the process again");
    }
    return finish(await this.done, this.timeoutMs);
  }

  /** Stops following the process; it keeps running in the sandbox. */
  async disconnect(): Promise<void> {
    this.disconnected = true;
    this.abort?.abort();
    await this.done.catch(() => undefined);
  }

  kill(signal = 9): Promise<void> {
    return this.sandbox.commands.kill(this.pid, { signal });
  }

  sendStdin(data: string | Uint8Array): Promise<void> {
    return this.sandbox.commands.sendStdin(this.pid, data);
  }

  closeStdin(): Promise<void> {
    return this.sandbox.commands.closeStdin(this.pid);
  }
}

export class Commands {
  constructor(private readonly s: Sandbox) {}

  private async *events(resp: Response): AsyncGenerator<ProcessEvent> {
    for await (const line of ndjson(resp)) {
      const e = eventOf(line);
      if (e) yield e;
    }
  }

  private async start(cmd: string | string[], o: RunOptions, signal?: AbortSignal): Promise<Response> {
    const body: Record<string, unknown> = {
      command: typeof cmd === "string" ? ["sh", "-c", cmd] : cmd,
      stdin: o.stdin !== undefined,
    };
    if (o.envs) body.env = o.envs;
    if (o.cwd) body.cwd = o.cwd;
    if (o.user) body.user = o.user;
    if (o.tag) body.tag = o.tag;
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
    if ((o as { pty?: unknown }).pty) body.pty = (o as { pty?: unknown }).pty;
    return this.s.conn.fetch(`${this.s.path}/processes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal,
    });
  }

  private async handle(
    resp: () => (signal: AbortSignal) => Promise<Response>,
    o: Pick<RunOptions, "onStdout" | "onStderr">,
    tag?: string,
    pid = 0,
    timeoutMs?: number,
  ): Promise<CommandHandle> {
    const abort = new AbortController();
    const r = await resp()(abort.signal);
    const h = new CommandHandle(this.s, this.events(r), o, tag);
    h.abort = abort;
    if (pid) h.pid = pid;
    h.timeoutMs = timeoutMs;
    return h.ready();
  }

  /**
   * Runs a command (a string under `sh -c`, or an argv) to its end. A
   * non-zero exit throws CommandExitError (the result attached); running
   * past `timeoutMs` (60 s by default) throws CommandTimeoutError.
   */
  run(cmd: string | string[], opts?: RunOptions & { background?: false }): Promise<CommandResult>;
  /** Starts a command in the background. */
  run(cmd: string | string[], opts: RunOptions & { background: true }): Promise<CommandHandle>;
  async run(cmd: string | string[], opts: RunOptions & { background?: boolean } = {}) {
    const limit =
      opts.timeoutMs === undefined ? (opts.background ? undefined : DEFAULT_COMMAND_TIMEOUT_MS) : opts.timeoutMs || undefined;
    const o = { ...opts, timeoutMs: limit };
    const h = await this.handle(() => (signal) => this.start(cmd, o, signal), o, opts.tag, 0, limit);
    if (opts.stdin !== undefined) {
      if (opts.stdin.length) await h.sendStdin(opts.stdin);
      await h.closeStdin();
    }
    return opts.background ? h : h.wait();
  }

  /** @internal */
  async startPty(cmd: string[], o: RunOptions & { pty: { cols: number; rows: number } }) {
    return this.handle(
      () => (signal) => this.start(cmd, { ...o, stdin: new Uint8Array() }, signal),
      o,
      o.tag,
      0,
      o.timeoutMs,
    );
  }

  /**
   * Reattaches to a process by pid (or `{ pid }` / `{ tag }`), replaying
   * its output so far and following it.
   */
  async connect(
    target: number | { pid?: number; tag?: string },
    opts: Pick<RunOptions, "onStdout" | "onStderr"> = {},
  ): Promise<CommandHandle> {
    const t = typeof target === "number" ? { pid: target } : target;
    return this.handle(
      () => (signal) => this.s.conn.fetch(this.s.processPath(t, ":connect"), { signal }),
      opts,
      t.tag,
      t.pid ?? 0,
    );
  }

  async list(includeExited = false) {
    const r = await this.s.conn.unwrap(
      this.s.conn.api.GET("/v1/sandboxes/{sandboxId}/processes", {
        params: { path: { sandboxId: this.s.sandboxId }, query: { includeExited } },
      }),
    );
    return r.processes ?? [];
  }

  async kill(pid: number, o: { signal?: number; tag?: string } = {}): Promise<void> {
    await this.s.conn.fetch(this.s.processPath({ pid, tag: o.tag }, ":signal"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ signal: o.signal ?? 9 }),
    });
  }

  async sendStdin(pid: number, data: string | Uint8Array, tag?: string): Promise<void> {
    await this.s.conn.fetch(this.s.processPath({ pid, tag }, ":input"), {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: bytes(data),
    });
  }

  async closeStdin(pid: number, tag?: string): Promise<void> {
    await this.s.conn.fetch(this.s.processPath({ pid, tag }, ":closeStdin"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
  }
}
