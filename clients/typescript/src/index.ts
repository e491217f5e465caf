/**
 * Talon Sandbox SDK for TypeScript (ESM, Node 20+, browsers with fetch).
 *
 *     import { Sandbox } from "@talon-sandbox/sdk";
 *     const sbx = await Sandbox.create();            // waits until it runs
 *     const r = await sbx.commands.run("echo hi");   // { stdout, stderr, exitCode }
 *     await sbx.kill();
 *
 * Unary calls go through openapi-fetch with the types openapi-typescript
 * generates from the OpenAPI document (src/generated/schema.ts); streams
 * (NDJSON lines) and raw file bodies use fetch directly.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./generated/schema.js";

export type ApiSandbox = components["schemas"]["Sandbox"];

/** A failed call; `code` is the gRPC code name, e.g. "NOT_FOUND". */
export class TalonError extends Error {
  code = "UNKNOWN";
  constructor(
    message: string,
    readonly status = 0,
    readonly details: unknown[] = [],
    readonly requestId?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
export class InvalidArgumentError extends TalonError { override code = "INVALID_ARGUMENT"; }
export class NotFoundError extends TalonError { override code = "NOT_FOUND"; }
export class AlreadyExistsError extends TalonError { override code = "ALREADY_EXISTS"; }
export class PermissionDeniedError extends TalonError { override code = "PERMISSION_DENIED"; }
export class AuthenticationError extends TalonError { override code = "UNAUTHENTICATED"; }
export class FailedPreconditionError extends TalonError { override code = "FAILED_PRECONDITION"; }
export class ResourceExhaustedError extends TalonError { override code = "RESOURCE_EXHAUSTED"; }
export class TimeoutError extends TalonError { override code = "DEADLINE_EXCEEDED"; }
export class ConflictError extends TalonError { override code = "ABORTED"; }
export class UnavailableError extends TalonError { override code = "UNAVAILABLE"; }
export class UnimplementedError extends TalonError { override code = "UNIMPLEMENTED"; }
export class InternalError extends TalonError { override code = "INTERNAL"; }

/**
 * A command ended with a non-zero exit code (or a signal). The result is
 * attached, like E2B's CommandExitError: `result`, `stdout`, `stderr`,
 * `exitCode`.
 */
export class CommandExitError extends TalonError {
  override code = "COMMAND_EXIT";
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
  constructor(readonly result: CommandResult) {
    super(
      `the command ended with ${result.signal ? `signal ${result.signal}` : `exit code ${result.exitCode}`}: ${result.stderr.slice(-500)}`,
    );
    this.stdout = result.stdout;
    this.stderr = result.stderr;
    this.exitCode = result.exitCode;
  }
}

/** A command ran past its timeout and was killed; `result` holds its output. */
export class CommandTimeoutError extends TimeoutError {
  constructor(
    readonly result: CommandResult,
    timeoutMs: number,
  ) {
    super(`the command ran longer than its timeout of ${timeoutMs} ms and was killed`);
  }
}

/** A finished command's result, or the error it stands for. */
function finish(r: CommandResult, timeoutMs?: number): CommandResult {
  if (r.timedOut) throw new CommandTimeoutError(r, timeoutMs ?? 0);
  if (r.exitCode !== 0 || r.signal) throw new CommandExitError(r);
  return r;
}

/** Foreground commands are killed after this long unless `timeoutMs` says otherwise (0: no limit). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

const BY_CODE: Record<number, typeof TalonError> = {
  3: InvalidArgumentError, 4: TimeoutError, 5: NotFoundError, 6: AlreadyExistsError,
  7: PermissionDeniedError, 8: ResourceExhaustedError, 9: FailedPreconditionError,
  10: ConflictError, 11: InvalidArgumentError, 12: UnimplementedError, 13: InternalError,
  14: UnavailableError, 16: AuthenticationError,
};
const BY_HTTP: Record<number, typeof TalonError> = {
  400: InvalidArgumentError, 401: AuthenticationError, 403: PermissionDeniedError,
  404: NotFoundError, 409: ConflictError, 429: ResourceExhaustedError, 501: UnimplementedError,
  503: UnavailableError, 504: TimeoutError,
};

/** The typed error a gateway error body (or bare HTTP status) stands for. */
export function errorFrom(status: number, body: unknown, requestId?: string): TalonError {
  const b = body as { code?: unknown; message?: unknown; details?: unknown[] } | null;
  if (b && typeof b.code === "number") {
    const Cls = BY_CODE[b.code] ?? TalonError;
    return new Cls(String(b.message ?? ""), status, b.details ?? [], requestId);
  }
  const Cls = BY_HTTP[status] ?? (status >= 500 ? InternalError : TalonError);
  return new Cls(`HTTP ${status}: ${String(body).slice(0, 200)}`, status, [], requestId);
}

async function failure(resp: Response): Promise<TalonError> {
  const text = await resp.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return errorFrom(resp.status, body, resp.headers.get("x-request-id") ?? undefined);
}

export interface ConnectionOptions {
  /** An API key (tln_…) or an access token; TALON_API_KEY by default. */
  apiKey?: string;
  /**
   * The REST gateway; TALON_URL, else http://127.0.0.1:8080. Several
   * servers of one platform, comma-separated, are tried in turn (Servers).
   */
  baseUrl?: string;
}

/** Errors of a request that reached no server (it may go to another). */
const UNSENT = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * Several servers of one platform: requests go to the current one. A
 * request that could not connect there (it reached no server) is sent to
 * the next ones in turn, and the first that answers becomes current; one
 * that failed after it was sent is not resent (a create may have
 * happened), but the next request goes to the next server, so a retry
 * reaches a live one.
 */
class Servers {
  readonly urls: string[];
  private current = 0;

  constructor(list: string) {
    this.urls = list.split(",").map((u) => u.trim().replace(/\/+$/, ""));
    if (this.urls.some((u) => !u)) throw new InvalidArgumentError(`an empty URL in ${JSON.stringify(list)}`);
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init);
    if (this.urls.length === 1) {
      try {
        return await fetch(req);
      } catch (e) {
        throw unreachable(e, this.urls[0]);
      }
    }
    const rel = req.url.startsWith(this.urls[0]) ? req.url.slice(this.urls[0].length) : new URL(req.url).pathname;
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
    const n = this.urls.length;
    const start = this.current;
    let last: unknown;
    for (let k = 0; k < n; k++) {
      const i = (start + k) % n;
      try {
        const resp = await fetch(this.urls[i] + rel, { method: req.method, headers: req.headers, body, signal: req.signal });
        this.current = i;
        return resp;
      } catch (e) {
        last = e;
        if (this.current === i) this.current = (i + 1) % n;
        const code = (e as { cause?: { code?: string } }).cause?.code;
        if (!code || !UNSENT.has(code)) throw unreachable(e, this.urls[i]);
      }
    }
    throw unreachable(last, this.urls[(start + n - 1) % n]);
  };
}

/** A request that failed in the network, as the SDK's UnavailableError
 * (an abort by the caller stays what it is). */
function unreachable(e: unknown, url: string): unknown {
  if (!(e instanceof TypeError)) return e;
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return new UnavailableError(`cannot reach Talon at ${url}: ${cause?.code ?? cause?.message ?? e.message}`);
}

const env = (k: string): string | undefined =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env?.[k];

class Connection {
  /** The first server's URL. */
  readonly baseUrl: string;
  readonly headers: Record<string, string>;
  readonly api: Client<paths>;
  private readonly servers: Servers;

  constructor(o: ConnectionOptions = {}) {
    const key = o.apiKey ?? env("TALON_API_KEY");
    if (!key) throw new AuthenticationError("no API key: pass apiKey or set TALON_API_KEY");
    this.servers = new Servers(o.baseUrl ?? env("TALON_URL") ?? "http://127.0.0.1:8080");
    this.baseUrl = this.servers.urls[0];
    this.headers = { authorization: `Bearer ${key}` };
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.headers, fetch: this.servers.fetch });
  }

  /** The data of an openapi-fetch result, or its typed error. */
  async unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<NonNullable<T>> {
    const { data, error, response } = await p;
    if (!response.ok || data === undefined) {
      throw errorFrom(response.status, error, response.headers.get("x-request-id") ?? undefined);
    }
    return data as NonNullable<T>;
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const resp = await this.servers.fetch(this.baseUrl + path, {
      ...init,
      headers: { ...this.headers, ...(init.headers as Record<string, string> | undefined) },
    });
    if (!resp.ok) throw await failure(resp);
    return resp;
  }
}

/** NDJSON lines of a response body, parsed. */
async function* ndjson(resp: Response): AsyncGenerator<Record<string, unknown>> {
  const reader = resp.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line);
    }
  }
  if (buf.trim()) yield JSON.parse(buf);
}

/** A request body of bytes (fetch wants a plain ArrayBuffer view). */
const bytes = (d: string | Uint8Array): ArrayBuffer => {
  const u = typeof d === "string" ? new TextEncoder().encode(d) : d;
  return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
};
const b64 = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const seconds = (ms: number): string => `${ms / 1000}s`;
const enc = encodeURIComponent;

export interface SandboxInfo {
  sandboxId: string;
  state: string;
  image: string;
  /** E2B's name for the image. */
  templateId: string;
  metadata: Record<string, string>;
  startedAt?: Date;
  endAt?: Date;
  /** The snapshot it was created from ("" for none). */
  snapshotId: string;
  /** "container" or "gvisor". */
  isolation: string;
  raw: ApiSandbox;
}

/** A snapshot of a sandbox's filesystem; `Sandbox.create({ snapshotId })` starts from it. */
export interface SnapshotInfo {
  snapshotId: string;
  name: string;
  sandboxId: string;
  image: string;
  sizeBytes: number;
  createdAt?: Date;
  raw: components["schemas"]["Snapshot"];
}

function snapshotInfo(s: components["schemas"]["Snapshot"]): SnapshotInfo {
  return {
    snapshotId: s.snapshotId ?? "",
    name: s.name ?? "",
    sandboxId: s.sandboxId ?? "",
    image: s.image ?? "",
    sizeBytes: Number(s.sizeBytes ?? 0),
    createdAt: s.createTime ? new Date(s.createTime) : undefined,
    raw: s,
  };
}

function info(s: ApiSandbox): SandboxInfo {
  return {
    snapshotId: s.snapshotId ?? "",
    isolation: String(s.isolation ?? "ISOLATION_CONTAINER").replace("ISOLATION_", "").toLowerCase(),
    sandboxId: s.sandboxId ?? "",
    state: String(s.state ?? "").replace("SANDBOX_STATE_", "").toLowerCase(),
    image: s.image ?? "",
    templateId: s.image ?? "",
    metadata: { ...(s.metadata ?? {}) },
    startedAt: s.createTime ? new Date(s.createTime) : undefined,
    endAt: s.expireTime ? new Date(s.expireTime) : undefined,
    raw: s,
  };
}

/** What a sandbox uses at one moment. */
export interface SandboxMetrics {
  timestamp: Date;
  cpuCount: number;
  cpuUsedPct: number;
  memUsed: number;
  memTotal: number;
  diskUsed: number;
  diskTotal: number;
}

/** One file of `files.writeFiles`. */
export interface WriteEntry {
  path: string;
  data: string | Uint8Array;
}

const STATES = ["pending", "starting", "running", "paused", "stopping", "stopped", "failed", "deleted"];

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

export interface FileInfo {
  path: string;
  name: string;
  type: "file" | "dir" | "symlink" | string;
  size: number;
  mode: number;
}

function fileInfo(f: components["schemas"]["FileInfo"] | undefined): FileInfo {
  const t = String(f?.type ?? "").replace("FILE_TYPE_", "").toLowerCase();
  return {
    path: f?.path ?? "",
    name: f?.name ?? "",
    type: t === "directory" ? "dir" : t,
    size: Number(f?.size ?? 0),
    mode: Number(f?.mode ?? 0),
  };
}

/** A change under a watched directory. */
export interface FilesystemEvent {
  type: string;
  path: string;
}

/** A running `watchDir`: events go to its callback and to `getNewEvents()`. */
export class WatchHandle {
  private events: FilesystemEvent[] = [];
  /** Set when the stream broke (not when stopped). */
  error?: unknown;
  /** @internal */ readonly done: Promise<void>;

  /** @internal */
  constructor(
    private readonly abort: AbortController,
    stream: AsyncGenerator<FilesystemEvent>,
    onEvent?: (e: FilesystemEvent) => void | Promise<void>,
  ) {
    this.done = (async () => {
      try {
        for await (const e of stream) {
          this.events.push(e);
          await onEvent?.(e);
        }
      } catch (e) {
        if (!this.abort.signal.aborted) this.error = e;
      }
    })();
  }

  /** The events that arrived since the last call, oldest first. */
  getNewEvents(): FilesystemEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

/** `user` on a file call: that user's permissions, and what it creates is theirs. */
export interface FileOptions {
  user?: string;
}

const withUser = (q: Record<string, string>, o?: FileOptions): URLSearchParams => {
  const p = new URLSearchParams(q);
  if (o?.user) p.set("user", o.user);
  return p;
};

export class Files {
  constructor(private readonly s: Sandbox) {}

  /** Writes a whole file atomically; `user` makes it that user's. */
  write(path: string, data: string | Uint8Array, o?: { mode?: number } & FileOptions): Promise<FileInfo>;
  /** Writes several files, each atomically, in order (E2B's form). */
  write(files: WriteEntry[], o?: FileOptions): Promise<FileInfo[]>;
  async write(
    pathOrFiles: string | WriteEntry[],
    dataOrOpts?: string | Uint8Array | FileOptions,
    o: { mode?: number } & FileOptions = {},
  ): Promise<FileInfo | FileInfo[]> {
    if (Array.isArray(pathOrFiles)) return this.writeFiles(pathOrFiles, dataOrOpts as FileOptions);
    const q = withUser({ path: pathOrFiles, create_parents: "true" }, o);
    if (o.mode) q.set("mode", String(o.mode));
    const resp = await this.s.conn.fetch(`${this.s.path}/files:write?${q}`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: bytes(dataOrOpts as string | Uint8Array),
    });
    return fileInfo(((await resp.json()) as { info?: components["schemas"]["FileInfo"] }).info);
  }

  /** Writes several files, each atomically, in order. */
  async writeFiles(files: WriteEntry[], o: FileOptions = {}): Promise<FileInfo[]> {
    const out: FileInfo[] = [];
    for (const f of files) out.push(await this.write(f.path, f.data, o));
    return out;
  }

  read(path: string, o?: { format?: "text" } & FileOptions): Promise<string>;
  read(path: string, o: { format: "bytes" } & FileOptions): Promise<Uint8Array>;
  read(path: string, o: { format: "blob" } & FileOptions): Promise<Blob>;
  /** The content as a stream of chunks, for files too big to hold. */
  read(path: string, o: { format: "stream" } & FileOptions): Promise<ReadableStream<Uint8Array>>;
  async read(
    path: string,
    o: { format?: "text" | "bytes" | "blob" | "stream" } & FileOptions = {},
  ): Promise<string | Uint8Array | Blob | ReadableStream<Uint8Array>> {
    const resp = await this.s.conn.fetch(`${this.s.path}/files:read?${withUser({ path }, o)}`, {
      headers: { accept: "application/octet-stream" },
    });
    if (o.format === "stream") return resp.body!;
    if (o.format === "blob") return resp.blob();
    const bytes = new Uint8Array(await resp.arrayBuffer());
    return o.format === "bytes" ? bytes : new TextDecoder().decode(bytes);
  }

  async list(path = ".", depthOrOpts: number | ({ depth?: number } & FileOptions) = 1): Promise<FileInfo[]> {
    const o = typeof depthOrOpts === "number" ? { depth: depthOrOpts } : depthOrOpts;
    const r = await this.s.conn.unwrap(
      this.s.conn.api.GET("/v1/sandboxes/{sandboxId}/files:list", {
        params: { path: { sandboxId: this.s.sandboxId }, query: { path, depth: o.depth ?? 1, user: o.user } },
      }),
    );
    return (r.entries ?? []).map(fileInfo);
  }

  async stat(path: string, o: FileOptions = {}): Promise<FileInfo> {
    const r = await this.s.conn.unwrap(
      this.s.conn.api.GET("/v1/sandboxes/{sandboxId}/files:stat", {
        params: { path: { sandboxId: this.s.sandboxId }, query: { path, user: o.user } },
      }),
    );
    return fileInfo(r.info);
  }

  /** E2B's name for `stat`. */
  getInfo(path: string, o: FileOptions = {}): Promise<FileInfo> {
    return this.stat(path, o);
  }

  async exists(path: string, o: FileOptions = {}): Promise<boolean> {
    try {
      await this.stat(path, o);
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  async makeDir(path: string, parentsOrOpts: boolean | ({ parents?: boolean } & FileOptions) = true): Promise<void> {
    const o = typeof parentsOrOpts === "boolean" ? { parents: parentsOrOpts } : parentsOrOpts;
    await this.s.conn.unwrap(
      this.s.conn.api.POST("/v1/sandboxes/{sandboxId}/files:mkdir", {
        params: { path: { sandboxId: this.s.sandboxId } },
        body: { path, parents: o.parents ?? true, ...(o.user ? { user: o.user } : {}) },
      }),
    );
  }

  async rename(from: string, to: string, o: FileOptions = {}): Promise<void> {
    await this.s.conn.unwrap(
      this.s.conn.api.POST("/v1/sandboxes/{sandboxId}/files:move", {
        params: { path: { sandboxId: this.s.sandboxId } },
        body: { sourcePath: from, destinationPath: to, ...(o.user ? { user: o.user } : {}) },
      }),
    );
  }

  async remove(path: string, recursiveOrOpts: boolean | ({ recursive?: boolean } & FileOptions) = false): Promise<void> {
    const o = typeof recursiveOrOpts === "boolean" ? { recursive: recursiveOrOpts } : recursiveOrOpts;
    await this.s.conn.unwrap(
      this.s.conn.api.DELETE("/v1/sandboxes/{sandboxId}/files", {
        params: {
          path: { sandboxId: this.s.sandboxId },
          query: { path, recursive: o.recursive ?? false, user: o.user },
        },
      }),
    );
  }

  private async *events(resp: Response): AsyncGenerator<FilesystemEvent> {
    for await (const line of ndjson(resp)) {
      if (line.error) throw errorFrom(0, line.error);
      yield {
        type: String(line.type ?? "").replace("FILE_EVENT_TYPE_", "").toLowerCase(),
        path: String(line.path ?? ""),
      };
    }
  }

  /**
   * Watches `path` until `stop()`: events go to `onEvent` (if given) and
   * to `getNewEvents()`. The watch is open when this resolves, so no
   * change made after it is missed.
   */
  async watchDir(
    path: string,
    onEvent?: (e: FilesystemEvent) => void | Promise<void>,
    o: { recursive?: boolean } & FileOptions = {},
  ): Promise<WatchHandle> {
    const abort = new AbortController();
    const q = withUser({ path, recursive: String(o.recursive ?? false) }, o);
    const resp = await this.s.conn.fetch(`${this.s.path}/files:watch?${q}`, { signal: abort.signal });
    return new WatchHandle(abort, this.events(resp), onEvent);
  }

  /** Yields changes under `path`; break the loop (or abort) to stop. */
  async *watch(path: string, o: { recursive?: boolean; signal?: AbortSignal } = {}) {
    const q = new URLSearchParams({ path, recursive: String(o.recursive ?? false) });
    const resp = await this.s.conn.fetch(`${this.s.path}/files:watch?${q}`, { signal: o.signal });
    yield* this.events(resp);
  }
}

export class PtyHandle extends CommandHandle {
  /** @internal */ sandboxRef!: Sandbox;

  async resize(size: { cols: number; rows: number }): Promise<void> {
    await this.sandboxRef.pty.resize(this.pid, size);
  }
}

export class Pty {
  constructor(private readonly s: Sandbox) {}

  private wrap(h: CommandHandle): PtyHandle {
    const p = Object.setPrototypeOf(h, PtyHandle.prototype) as PtyHandle;
    p.sandboxRef = this.s;
    return p;
  }

  /**
   * A terminal: a login shell (or `cmd`) under a PTY, as `user` (the
   * image's default when unset), killed after `timeoutMs` if given.
   */
  async create(o: {
    cols?: number;
    rows?: number;
    cmd?: string[];
    envs?: Record<string, string>;
    cwd?: string;
    tag?: string;
    user?: string;
    timeoutMs?: number;
    onData?: (data: string) => void;
  } = {}): Promise<PtyHandle> {
    const h = await this.s.commands.startPty(o.cmd ?? ["bash", "-l"], {
      envs: o.envs,
      cwd: o.cwd,
      tag: o.tag,
      user: o.user,
      timeoutMs: o.timeoutMs,
      onStdout: o.onData,
      pty: { cols: o.cols ?? 80, rows: o.rows ?? 24 },
    });
    return this.wrap(h);
  }

  /** Reattaches to a terminal by pid: its output so far, then on. */
  async connect(pid: number, o: { onData?: (data: string) => void } = {}): Promise<PtyHandle> {
    return this.wrap(await this.s.commands.connect(pid, { onStdout: o.onData }));
  }

  async resize(pid: number, size: { cols: number; rows: number }): Promise<void> {
    await this.s.conn.fetch(this.s.processPath({ pid }, ":resize"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ size }),
    });
  }

  /** Keystrokes to the terminal. */
  sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    return this.s.commands.sendStdin(pid, data);
  }

  kill(pid: number): Promise<void> {
    return this.s.commands.kill(pid);
  }
}

export interface CreateOptions extends ConnectionOptions {
  /** The image; "host" by default. */
  image?: string;
  /** E2B's name for `image`. */
  template?: string;
  envs?: Record<string, string>;
  /** How long it may live, then `onTimeout` happens. */
  timeoutMs?: number;
  /** "pause" (the default) or "kill" when the timeout passes. */
  onTimeout?: "pause" | "kill";
  /** Free-form metadata, filterable in `list`. */
  metadata?: Record<string, string>;
  /** false seals the sandbox: no network but its own loopback. */
  allowInternetAccess?: boolean;
  /** `allowOut`: only these CIDRs, IPs and domains (`denyOut` may only be ["0.0.0.0/0"]). */
  network?: { allowOut?: string[]; denyOut?: string[] };
  /** A retried create with the same key returns the first one's sandbox (24 h). */
  idempotencyKey?: string;
  /** Pause it after this long without activity (calls, output, input, preview traffic). */
  idleTimeoutMs?: number;
  /** The next call to it while paused resumes it first. */
  autoResume?: boolean;
  /** Start from this snapshot's files (`createSnapshot`), on its image; leave `image` unset. */
  snapshotId?: string;
  /** "container" (the default) or "gvisor": a user-space kernel between the code and the host's, where a worker offers it. */
  isolation?: "container" | "gvisor" | "microvm";
  cpuMillis?: number;
  memoryMib?: number;
  labels?: Record<string, string>;
  secrets?: string[];
  /** Wait until RUNNING (the default). */
  wait?: boolean;
  waitTimeoutMs?: number;
}

const IP = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)(\/\d{1,3})?$/;

/** E2B's network options as an egress policy (see CreateOptions). */
export function networkPolicy(o: Pick<CreateOptions, "allowInternetAccess" | "network">): ApiSandbox["networkPolicy"] {
  const allow = o.network?.allowOut ?? [];
  const deny = o.network?.denyOut ?? [];
  if (deny.length && !(deny.length === 1 && deny[0] === "0.0.0.0/0")) {
    throw new InvalidArgumentError(
      'denyOut may only be ["0.0.0.0/0"]: Talon denies what is not allowed, and private ranges always',
    );
  }
  if (allow.length) {
    const cidrs = allow.filter((a) => IP.test(a)).map((a) => (a.includes("/") ? a : a + (a.includes(":") ? "/128" : "/32")));
    const domains = allow.filter((a) => !IP.test(a));
    return { mode: "EGRESS_MODE_ALLOWLIST", allowCidrs: cidrs, allowDomains: domains };
  }
  if (deny.length || o.allowInternetAccess === false) return { mode: "EGRESS_MODE_SEALED" };
  return undefined;
}

export interface ListOptions extends ConnectionOptions {
  /** Only sandboxes whose metadata holds every pair, in these states. */
  query?: { metadata?: Record<string, string>; state?: string[] };
  /** E2B's names for pageSize and pageToken. */
  limit?: number;
  nextToken?: string;
  pageSize?: number;
  pageToken?: string;
}

async function killed(conn: Connection, sandboxId: string): Promise<boolean> {
  try {
    await conn.unwrap(conn.api.DELETE("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId } } }));
    return true;
  } catch (e) {
    if (e instanceof NotFoundError) return false;
    throw e;
  }
}

/** One event of an agent run, numbered from 1. */
export type AgentEvent =
  | { kind: "started"; seq: number; pid: number; runId: string }
  | { kind: "output"; seq: number; stream: "stdout" | "stderr"; text: string }
  | { kind: "fileChange"; seq: number; path: string; change: string }
  | { kind: "completed"; seq: number; exitCode: number; timedOut: boolean; durationMs: number };

/** A completed agent run. */
export interface AgentRun {
  runId: string;
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
  events: AgentEvent[];
}

export interface AgentOptions {
  prompt?: string;
  envs?: Record<string, string>;
  cwd?: string;
  user?: string;
  /** Names of tenant secrets given as environment variables (redacted from every event). */
  secrets?: string[];
  timeoutMs?: number;
  onEvent?: (e: AgentEvent) => void | Promise<void>;
  /** Reattaches this many times when the stream drops (3). */
  reattach?: number;
}

function agentEvent(line: Record<string, unknown>): AgentEvent | undefined {
  if (line.error) throw errorFrom(0, line.error);
  const e = ((line.event as Record<string, unknown>) ?? line) as Record<string, any>;
  const seq = Number(e.seq ?? 0);
  if (e.started) return { kind: "started", seq, pid: Number(e.started.pid ?? 0), runId: String(e.started.runId ?? "") };
  if (e.output) {
    const stream = e.output.stream === "OUTPUT_STREAM_STDERR" ? "stderr" : "stdout";
    return { kind: "output", seq, stream, text: String(e.output.text ?? "") };
  }
  if (e.fileChange) {
    const change = String(e.fileChange.kind ?? "").replace("FILE_EVENT_TYPE_", "").toLowerCase();
    return { kind: "fileChange", seq, path: String(e.fileChange.path ?? ""), change };
  }
  if (e.completed) {
    const c = e.completed;
    return {
      kind: "completed",
      seq,
      exitCode: Number(c.exitCode ?? 0),
      timedOut: Boolean(c.timedOut),
      durationMs: parseFloat(String(c.duration ?? "0s")) * 1000,
    };
  }
  return undefined;
}

/** Agent runs: a command given a prompt on stdin; runs outlive the stream. */
export class Agent {
  constructor(private readonly s: Sandbox) {}

  private runPath(runId: string, verb: string): string {
    return `${this.s.path}/agent-runs/${enc(runId)}${verb}`;
  }

  private async follow(resp: Response, st: { events: AgentEvent[]; last: number; runId: string; done?: AgentEvent }, onEvent?: AgentOptions["onEvent"]) {
    for await (const line of ndjson(resp)) {
      const e = agentEvent(line);
      if (!e || (e.seq && e.seq <= st.last)) continue;
      st.last = e.seq || st.last;
      if (e.kind === "started") st.runId = e.runId;
      if (e.kind === "completed") st.done = e;
      st.events.push(e);
      await onEvent?.(e);
    }
  }

  private result(st: { events: AgentEvent[]; runId: string; done?: AgentEvent }): AgentRun {
    const d = st.done;
    if (!d || d.kind !== "completed") throw new TalonError(`agent run ${st.runId} ended without completing`);
    return { runId: st.runId, exitCode: d.exitCode, timedOut: d.timedOut, durationMs: d.durationMs, events: st.events };
  }

  /** Runs `command` (a shell line, or argv) until it ends; a non-zero exit is not an error. */
  async run(command: string | string[], o: AgentOptions = {}): Promise<AgentRun> {
    const body: Record<string, unknown> = {
      command: typeof command === "string" ? ["/bin/bash", "-lc", command] : command,
      prompt: o.prompt ?? "",
    };
    if (o.envs) body.env = o.envs;
    if (o.cwd) body.cwd = o.cwd;
    if (o.user) body.user = o.user;
    if (o.secrets?.length) body.secretNames = o.secrets;
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
    const st: { events: AgentEvent[]; last: number; runId: string; done?: AgentEvent } = { events: [], last: 0, runId: "" };
    try {
      const resp = await this.s.conn.fetch(`${this.s.path}/agent:run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await this.follow(resp, st, o.onEvent);
    } catch (e) {
      if (!st.runId || e instanceof TalonError) throw e;
    }
    for (let tries = 0; !st.done && st.runId && tries < (o.reattach ?? 3); tries++) {
      try {
        const resp = await this.s.conn.fetch(`${this.runPath(st.runId, ":connect")}?afterSeq=${st.last}`);
        await this.follow(resp, st, o.onEvent);
      } catch (e) {
        if (e instanceof TalonError) throw e;
      }
    }
    return this.result(st);
  }

  /** Follows a run by id from after `afterSeq` until it completes. */
  async connect(runId: string, o: { afterSeq?: number; onEvent?: AgentOptions["onEvent"] } = {}): Promise<AgentRun> {
    const st: { events: AgentEvent[]; last: number; runId: string; done?: AgentEvent } = { events: [], last: o.afterSeq ?? 0, runId };
    const resp = await this.s.conn.fetch(`${this.runPath(runId, ":connect")}?afterSeq=${st.last}`);
    await this.follow(resp, st, o.onEvent);
    return this.result(st);
  }

  /** Kills a run's process tree; the run then completes. */
  async cancel(runId: string): Promise<void> {
    await this.s.conn.fetch(this.runPath(runId, ":cancel"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
  }
}

/**
 * The sandbox's browser. `cdpUrl` is what Playwright's
 * `chromium.connectOverCDP` takes; `websocketDebuggerUrl` is Puppeteer's
 * `connect({ browserWSEndpoint })`;
 * `liveViewUrl` shows its screen as it changes. Both carry a token that
 * expires at `expireTime` (`browser.get()` gives fresh ones) and are empty
 * unless the browser runs and the caller may drive it.
 */
export interface BrowserInfo {
  state: "starting" | "running" | "stopped" | "crashed";
  cdpUrl: string;
  websocketDebuggerUrl: string;
  liveViewUrl: string;
  expireTime: string;
  pid: number;
  windowSize: string;
  /** How a crashed browser ended. */
  error: string;
}

function browserInfo(body: unknown): BrowserInfo {
  const b = ((body as { browser?: Record<string, unknown> })?.browser ?? {}) as Record<string, unknown>;
  const state = String(b.state ?? "BROWSER_STATE_STOPPED").replace("BROWSER_STATE_", "").toLowerCase();
  return {
    state: state as BrowserInfo["state"],
    cdpUrl: String(b.cdpUrl ?? ""),
    websocketDebuggerUrl: String(b.websocketDebuggerUrl ?? ""),
    liveViewUrl: String(b.liveViewUrl ?? ""),
    expireTime: String(b.expireTime ?? ""),
    pid: Number(b.pid ?? 0),
    windowSize: String(b.windowSize ?? ""),
    error: String(b.error ?? ""),
  };
}

/** The sandbox's Chromium (headless, its profile in the workspace). */
export class Browser {
  constructor(private readonly s: Sandbox) {}

  private async call(method: string, rest: string, body?: unknown): Promise<unknown> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.headers = { "content-type": "application/json" };
      init.body = JSON.stringify(body);
    }
    return (await this.s.conn.fetch(`${this.s.path}${rest}`, init)).json();
  }

  /** Starts the browser (or returns the running one) once its DevTools answer. */
  async start(o: { windowSize?: string; urlTtlMs?: number } = {}): Promise<BrowserInfo> {
    const body: Record<string, unknown> = {};
    if (o.windowSize) body.windowSize = o.windowSize;
    if (o.urlTtlMs) body.urlTtl = seconds(o.urlTtlMs);
    return browserInfo(await this.call("POST", "/browser:start", body));
  }

  /** The browser's state, with fresh URLs when it runs. */
  async get(): Promise<BrowserInfo> {
    return browserInfo(await this.call("GET", "/browser"));
  }

  /** Stops it, letting it write its profile out first. */
  async stop(): Promise<BrowserInfo> {
    return browserInfo(await this.call("POST", "/browser:stop", {}));
  }

  /** A PNG of the active page. */
  async screenshot(o: { fullPage?: boolean } = {}): Promise<Uint8Array> {
    const r = (await this.call("GET", `/browser/screenshot${o.fullPage ? "?fullPage=true" : ""}`)) as { png?: string };
    return new Uint8Array(Buffer.from(r.png ?? "", "base64"));
  }
}

/** A code context: a kernel in the sandbox that keeps its state between runs. */
export interface CodeContext {
  id: string;
  language: string;
  cwd: string;
  executionCount: number;
}

/** A rich result by MIME type; binary types (PNG, …) are base64 text. */
export interface CodeResult {
  data: Record<string, string>;
  isMainResult: boolean;
}

/** What the code raised: name ("ZeroDivisionError"), value and traceback. */
export interface CodeError {
  name: string;
  value: string;
  traceback: string[];
}

/** A run: its output, results, error (undefined when it succeeded) and end. */
export interface Execution {
  stdout: string;
  stderr: string;
  results: CodeResult[];
  error?: CodeError;
  /** The main result's text/plain. */
  text?: string;
  executionCount: number;
  durationMs: number;
  interrupted: boolean;
  timedOut: boolean;
}

export type CodeLanguage = "python" | "javascript" | "bash";

export interface RunCodeOptions {
  /** The context (or its id); the language's default context when unset. */
  context?: CodeContext | string;
  /** The default context's language ("python" when unset). */
  language?: CodeLanguage;
  timeoutMs?: number;
  onStdout?: (text: string) => unknown;
  onStderr?: (text: string) => unknown;
  onResult?: (r: CodeResult) => unknown;
  onError?: (e: CodeError) => unknown;
}

const codeLanguage = (l: string): string => {
  const m: Record<string, string> = {
    python: "CODE_LANGUAGE_PYTHON",
    javascript: "CODE_LANGUAGE_JAVASCRIPT",
    js: "CODE_LANGUAGE_JAVASCRIPT",
    bash: "CODE_LANGUAGE_BASH",
  };
  const v = m[l.toLowerCase()];
  if (!v) throw new InvalidArgumentError(`unknown language ${JSON.stringify(l)}: python, javascript or bash`);
  return v;
};

function codeContext(body: unknown): CodeContext {
  const b = (body ?? {}) as Record<string, any>;
  const c = (b.context ?? b) as Record<string, any>;
  return {
    id: String(c.contextId ?? ""),
    language: String(c.language ?? "").replace(/^CODE_LANGUAGE_/, "").toLowerCase(),
    cwd: String(c.cwd ?? ""),
    executionCount: Number(c.executionCount ?? 0),
  };
}

const ctxId = (c: CodeContext | string): string => (typeof c === "string" ? c : c.id);

/** Code contexts: Python (ipykernel), JavaScript (Node) and Bash kernels. */
export class Code {
  constructor(private readonly s: Sandbox) {}

  private async call(method: string, rest: string, body?: unknown): Promise<unknown> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.headers = { "content-type": "application/json" };
      init.body = JSON.stringify(body);
    }
    const resp = await this.s.conn.fetch(`${this.s.path}${rest}`, init);
    const text = await resp.text();
    return text ? JSON.parse(text) : {};
  }

  /** Runs code; an error the code raises is `Execution.error`, not a throw. */
  async run(code: string, o: RunCodeOptions = {}): Promise<Execution> {
    const body: Record<string, unknown> = { code };
    if (o.context !== undefined) body.contextId = ctxId(o.context);
    if (o.language) body.language = codeLanguage(o.language);
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
    const resp = await this.s.conn.fetch(`${this.s.path}/code:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const x: Execution = {
      stdout: "",
      stderr: "",
      results: [],
      executionCount: 0,
      durationMs: 0,
      interrupted: false,
      timedOut: false,
    };
    let done = false;
    for await (const line of ndjson(resp)) {
      if (line.error) throw errorFrom(0, line.error);
      const e = line as Record<string, any>;
      if (e.stdout) {
        x.stdout += String(e.stdout.text ?? "");
        await o.onStdout?.(String(e.stdout.text ?? ""));
      } else if (e.stderr) {
        x.stderr += String(e.stderr.text ?? "");
        await o.onStderr?.(String(e.stderr.text ?? ""));
      } else if (e.result) {
        const r: CodeResult = { data: { ...(e.result.data ?? {}) }, isMainResult: Boolean(e.result.isMainResult) };
        x.results.push(r);
        if (r.isMainResult) x.text = r.data["text/plain"];
        await o.onResult?.(r);
      } else if (e.codeError) {
        const c = e.codeError;
        x.error = { name: String(c.name ?? ""), value: String(c.value ?? ""), traceback: [...(c.traceback ?? [])] };
        await o.onError?.(x.error);
      } else if (e.completed) {
        const c = e.completed;
        x.executionCount = Number(c.executionCount ?? 0);
        x.durationMs = parseFloat(String(c.duration ?? "0s")) * 1000;
        x.interrupted = Boolean(c.interrupted);
        x.timedOut = Boolean(c.timedOut);
        done = true;
      }
    }
    if (!done) throw new TalonError("the run ended without completing");
    return x;
  }

  /** Starts a context; its kernel answers before this resolves. */
  async createContext(o: { language?: CodeLanguage; cwd?: string; envs?: Record<string, string> } = {}): Promise<CodeContext> {
    const body: Record<string, unknown> = { language: codeLanguage(o.language ?? "python") };
    if (o.cwd) body.cwd = o.cwd;
    if (o.envs) body.env = o.envs;
    return codeContext(await this.call("POST", "/code-contexts", body));
  }

  async listContexts(): Promise<CodeContext[]> {
    const b = (await this.call("GET", "/code-contexts")) as { contexts?: unknown[] };
    return (b.contexts ?? []).map(codeContext);
  }

  /** A fresh kernel: the state is gone, the id stays. */
  async restartContext(c: CodeContext | string): Promise<CodeContext> {
    return codeContext(await this.call("POST", `/code-contexts/${enc(ctxId(c))}:restart`, {}));
  }

  /** Interrupts the context's run (KeyboardInterrupt in Python). */
  async interrupt(c: CodeContext | string): Promise<void> {
    await this.call("POST", `/code-contexts/${enc(ctxId(c))}:interrupt`, {});
  }

  async deleteContext(c: CodeContext | string): Promise<void> {
    await this.call("DELETE", `/code-contexts/${enc(ctxId(c))}`);
  }
}

export class Sandbox {
  readonly commands = new Commands(this);
  readonly files = new Files(this);
  readonly pty = new Pty(this);
  readonly agent = new Agent(this);
  readonly browser = new Browser(this);
  readonly code = new Code(this);

  private constructor(
    private _info: SandboxInfo,
    /** @internal */ readonly conn: Connection,
  ) {}

  get sandboxId(): string {
    return this._info.sandboxId;
  }

  /** @internal */
  get path(): string {
    return `/v1/sandboxes/${enc(this.sandboxId)}`;
  }

  /** @internal */
  processPath(t: { pid?: number; tag?: string }, verb: string): string {
    return t.tag ? `${this.path}/processes/tags/${enc(t.tag)}${verb}` : `${this.path}/processes/${t.pid ?? 0}${verb}`;
  }

  /**
   * Creates a sandbox and waits until it runs: `create()`, `create(opts)`
   * or E2B's `create(template, opts)`.
   */
  static async create(templateOrOpts: string | CreateOptions = {}, opts: CreateOptions = {}): Promise<Sandbox> {
    const o = typeof templateOrOpts === "string" ? { ...opts, template: templateOrOpts } : templateOrOpts;
    const conn = new Connection(o);
    const body: ApiSandbox = o.snapshotId
      ? { snapshotId: o.snapshotId, ...(o.image ?? o.template ? { image: o.image ?? o.template } : {}) }
      : { image: o.image ?? o.template ?? "host" };
    if (o.envs) body.env = o.envs;
    if (o.labels) body.labels = o.labels;
    if (o.metadata) body.metadata = o.metadata;
    if (o.secrets) body.secretNames = o.secrets;
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
    if (o.idleTimeoutMs) body.idleTimeout = seconds(o.idleTimeoutMs);
    if (o.autoResume) body.autoResume = true;
    if (o.isolation !== undefined) {
      if (!["container", "gvisor", "microvm"].includes(o.isolation)) {
        throw new InvalidArgumentError(`isolation is "container", "gvisor" or "microvm", not ${JSON.stringify(o.isolation)}`);
      }
      body.isolation = `ISOLATION_${o.isolation.toUpperCase()}` as ApiSandbox["isolation"];
    }
    if (o.onTimeout !== undefined) {
      if (o.onTimeout !== "pause" && o.onTimeout !== "kill") {
        throw new InvalidArgumentError(`onTimeout is "pause" or "kill", not ${JSON.stringify(o.onTimeout)}`);
      }
      body.timeoutAction = o.onTimeout === "kill" ? "TIMEOUT_ACTION_DELETE" : "TIMEOUT_ACTION_PAUSE";
    }
    const policy = networkPolicy(o);
    if (policy) body.networkPolicy = policy;
    if (o.cpuMillis || o.memoryMib) {
      body.resources = {
        ...(o.cpuMillis ? { cpuMillis: String(o.cpuMillis) } : {}),
        ...(o.memoryMib ? { memoryMib: String(o.memoryMib) } : {}),
      };
    }
    const wait = o.wait ?? true;
    const r = await conn.unwrap(
      conn.api.POST("/v1/sandboxes", {
        params: {
          query: {
            ...(wait ? { waitUntilRunning: true, waitTimeout: seconds(o.waitTimeoutMs ?? 60_000) } : {}),
            ...(o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {}),
          },
        },
        body,
      }),
    );
    return new Sandbox(info(r.sandbox!), conn);
  }

  /**
   * Attaches to a sandbox: a paused one is resumed and a stopped one
   * started; a deleted one is NotFoundError. `timeoutMs` sets how long it
   * may live from now.
   */
  static async connect(sandboxId: string, o: ConnectionOptions & { timeoutMs?: number } = {}): Promise<Sandbox> {
    const conn = new Connection(o);
    const i = await Sandbox.getInfo(sandboxId, o);
    if (i.state === "deleted") throw new NotFoundError(`sandbox ${sandboxId} was deleted`);
    if (i.state === "failed") {
      throw new FailedPreconditionError(`sandbox ${sandboxId} failed: ${i.raw.stateMessage ?? ""}`);
    }
    const sbx = new Sandbox(i, conn);
    if (i.state === "paused") await sbx.resume();
    if (i.state === "stopped") {
      await conn.unwrap(
        conn.api.POST("/v1/sandboxes/{sandboxId}:start", { params: { path: { sandboxId } }, body: {} }),
      );
    }
    if (o.timeoutMs) await sbx.setTimeout(o.timeoutMs);
    if (i.state !== "running" || o.timeoutMs) await sbx.getInfo();
    return sbx;
  }

  /**
   * One page of the caller's sandboxes, newest first, filtered by
   * `query.metadata` and `query.state`; `nextPageToken` (also as
   * `nextToken`) is "" on the last page.
   */
  static async list(o: ListOptions = {}) {
    const conn = new Connection(o);
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(o.query?.metadata ?? {})) q.append(`metadata[${k}]`, v);
    for (const st of o.query?.state ?? []) {
      if (!STATES.includes(st)) throw new InvalidArgumentError(`unknown state ${JSON.stringify(st)}`);
      q.append("states", `SANDBOX_STATE_${st.toUpperCase()}`);
    }
    const size = o.pageSize ?? o.limit;
    const token = o.pageToken ?? o.nextToken;
    if (size) q.set("pageSize", String(size));
    if (token) q.set("pageToken", token);
    const r = (await (await conn.fetch(`/v1/sandboxes?${q}`)).json()) as components["schemas"]["ListSandboxesResponse"];
    const next = r.nextPageToken ?? "";
    return { sandboxes: (r.sandboxes ?? []).map(info), nextPageToken: next, nextToken: next, hasNext: next !== "" };
  }

  /** A sandbox's info by id, without attaching (and without resuming it). */
  static async getInfo(sandboxId: string, o: ConnectionOptions = {}): Promise<SandboxInfo> {
    const conn = new Connection(o);
    const r = await conn.unwrap(conn.api.GET("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId } } }));
    return info(r.sandbox!);
  }

  /** This sandbox's info, read again. */
  async getInfo(): Promise<SandboxInfo> {
    const r = await this.conn.unwrap(
      this.conn.api.GET("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId: this.sandboxId } } }),
    );
    this._info = info(r.sandbox!);
    return this._info;
  }

  async isRunning(): Promise<boolean> {
    return (await this.getInfo()).state === "running";
  }

  async pause(): Promise<void> {
    await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}:pause", { params: { path: { sandboxId: this.sandboxId } }, body: {} }),
    );
  }

  async resume(): Promise<void> {
    await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}:resume", { params: { path: { sandboxId: this.sandboxId } }, body: {} }),
    );
  }

  /** Deletes a sandbox by id; false when there is no such sandbox. */
  static async kill(sandboxId: string, o: ConnectionOptions = {}): Promise<boolean> {
    return killed(new Connection(o), sandboxId);
  }

  /** Deletes the sandbox and everything in it; false when it was gone. */
  async kill(): Promise<boolean> {
    return killed(this.conn, this.sandboxId);
  }

  /**
   * Copies the sandbox's filesystem (writable root, workspace, home) into a
   * snapshot of your tenant; a running sandbox is frozen for the copy only.
   * Processes and memory are not kept.
   */
  async createSnapshot(name?: string): Promise<SnapshotInfo> {
    const r = await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}/snapshots", {
        params: { path: { sandboxId: this.sandboxId } },
        body: name ? { name } : {},
      }),
    );
    return snapshotInfo(r.snapshot!);
  }

  /**
   * `count` (1 to 20) new sandboxes from this one's files now, with its
   * settings and each its own id, tokens and secrets; all running.
   */
  async fork(count = 1): Promise<Sandbox[]> {
    const r = await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}:fork", {
        params: { path: { sandboxId: this.sandboxId } },
        body: { count },
      }),
    );
    return (r.sandboxes ?? []).map((s) => new Sandbox(info(s), this.conn));
  }

  /** One page of your tenant's snapshots, newest first (of one sandbox with `sandboxId`). */
  static async listSnapshots(o: ConnectionOptions & { sandboxId?: string; pageSize?: number; pageToken?: string } = {}) {
    const conn = new Connection(o);
    const r = await conn.unwrap(
      conn.api.GET("/v1/snapshots", {
        params: {
          query: {
            ...(o.sandboxId ? { sandboxId: o.sandboxId } : {}),
            ...(o.pageSize ? { pageSize: o.pageSize } : {}),
            ...(o.pageToken ? { pageToken: o.pageToken } : {}),
          },
        },
      }),
    );
    return { snapshots: (r.snapshots ?? []).map(snapshotInfo), nextPageToken: r.nextPageToken ?? "" };
  }

  static async getSnapshot(snapshotId: string, o: ConnectionOptions = {}): Promise<SnapshotInfo> {
    const conn = new Connection(o);
    const r = await conn.unwrap(conn.api.GET("/v1/snapshots/{snapshotId}", { params: { path: { snapshotId } } }));
    return snapshotInfo(r.snapshot!);
  }

  /** Deletes a snapshot; sandboxes made from it keep their files. */
  static async deleteSnapshot(snapshotId: string, o: ConnectionOptions = {}): Promise<void> {
    const conn = new Connection(o);
    await conn.unwrap(conn.api.DELETE("/v1/snapshots/{snapshotId}", { params: { path: { snapshotId } } }));
  }

  /** The sandbox may live `ms` from now. */
  async setTimeout(ms: number): Promise<void> {
    await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}:setTimeout", {
        params: { path: { sandboxId: this.sandboxId } },
        body: { timeout: seconds(ms) },
      }),
    );
  }

  /** What the sandbox uses now (one reading, in a list like E2B's series). */
  async getMetrics(): Promise<SandboxMetrics[]> {
    const r = await this.conn.unwrap(
      this.conn.api.GET("/v1/sandboxes/{sandboxId}/metrics", { params: { path: { sandboxId: this.sandboxId } } }),
    );
    const m = r.metrics ?? {};
    return [
      {
        timestamp: new Date(m.sampleTime ?? Date.now()),
        cpuCount: Number(m.cpuCount ?? 0),
        cpuUsedPct: Number(m.cpuUsedPct ?? 0),
        memUsed: Number(m.memUsedBytes ?? 0),
        memTotal: Number(m.memTotalBytes ?? 0),
        diskUsed: Number(m.diskUsedBytes ?? 0),
        diskTotal: Number(m.diskTotalBytes ?? 0),
      },
    ];
  }

  /** A URL of the port that a browser opens directly (a signed preview link). */
  getHost(port: number, opts: { ttlMs?: number } = {}): Promise<string> {
    return this.previewUrl(port, opts);
  }

  private async fileUrl(path: string, operation: "FILE_URL_OPERATION_READ" | "FILE_URL_OPERATION_WRITE", ttlMs?: number) {
    const r = await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}/file-urls", {
        params: { path: { sandboxId: this.sandboxId } },
        body: { path, operation, ...(ttlMs ? { ttl: seconds(ttlMs) } : {}) },
      }),
    );
    return r.url ?? "";
  }

  /** A URL that downloads the file with a plain GET and no other credential (1 h by default). */
  downloadUrl(path: string, opts: { ttlMs?: number } = {}): Promise<string> {
    return this.fileUrl(path, "FILE_URL_OPERATION_READ", opts.ttlMs);
  }

  /** A URL that replaces the file with a POST body (application/octet-stream), no other credential. */
  uploadUrl(path: string, opts: { ttlMs?: number } = {}): Promise<string> {
    return this.fileUrl(path, "FILE_URL_OPERATION_WRITE", opts.ttlMs);
  }

  /**
   * A link to the port's preview that opens with no other credential: it
   * carries a fresh preview token (valid `ttlMs`, or the server's
   * default), which the gateway trades for a cookie of that preview only.
   * In the form the gateway serves by default: a subdomain
   * (`http://PORT-ID.localhost:8080/` on loopback), where apps with
   * root-absolute asset paths work; `path: true` gives the path form
   * (`/preview/ID/PORT/`) for clients that can't resolve `*.localhost`.
   * `previewAddress` is the bare path address, which needs an
   * Authorization header.
   */
  async previewUrl(port: number, opts: { ttlMs?: number; path?: boolean } = {}): Promise<string> {
    const r = await this.previewToken(port, opts.ttlMs);
    if (opts.path) return `${this.previewAddress(port)}?token=${encodeURIComponent(r.token ?? "")}`;
    return r.url ?? "";
  }

  /** The unsigned path-prefix address of a port's preview. */
  previewAddress(port: number): string {
    return `${this.conn.baseUrl}/preview/${this.sandboxId}/${port}/`;
  }

  async previewToken(port: number, ttlMs?: number) {
    return this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}/preview-tokens", {
        params: { path: { sandboxId: this.sandboxId } },
        body: ttlMs ? { port, ttl: seconds(ttlMs) } : { port },
      }),
    );
  }
}

/** Who the credential is: tenant, user or API key, role. */
export async function whoami(o: ConnectionOptions = {}) {
  const conn = new Connection(o);
  return conn.unwrap(conn.api.GET("/v1/auth/me", {}));
}
