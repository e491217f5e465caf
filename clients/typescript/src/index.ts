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
  /** The REST gateway; TALON_URL, else http://127.0.0.1:8080. */
  baseUrl?: string;
}

const env = (k: string): string | undefined =>
  (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env?.[k];

class Connection {
  readonly baseUrl: string;
  readonly headers: Record<string, string>;
  readonly api: Client<paths>;

  constructor(o: ConnectionOptions = {}) {
    const key = o.apiKey ?? env("TALON_API_KEY");
    if (!key) throw new AuthenticationError("no API key: pass apiKey or set TALON_API_KEY");
    this.baseUrl = (o.baseUrl ?? env("TALON_URL") ?? "http://127.0.0.1:8080").replace(/\/$/, "");
    this.headers = { authorization: `Bearer ${key}` };
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.headers });
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
    const resp = await fetch(this.baseUrl + path, {
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
  raw: ApiSandbox;
}

function info(s: ApiSandbox): SandboxInfo {
  return {
    sandboxId: s.sandboxId ?? "",
    state: String(s.state ?? "").replace("SANDBOX_STATE_", "").toLowerCase(),
    image: s.image ?? "",
    raw: s,
  };
}

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
  /** Kill the process after this long. */
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

  wait(): Promise<CommandResult> {
    return this.done;
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

  private async start(cmd: string | string[], o: RunOptions): Promise<Response> {
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
    });
  }

  /** Runs a command (a string under `sh -c`, or an argv) to its end. */
  run(cmd: string | string[], opts?: RunOptions & { background?: false }): Promise<CommandResult>;
  /** Starts a command in the background. */
  run(cmd: string | string[], opts: RunOptions & { background: true }): Promise<CommandHandle>;
  async run(cmd: string | string[], opts: RunOptions & { background?: boolean } = {}) {
    const resp = await this.start(cmd, opts);
    const h = await new CommandHandle(this.s, this.events(resp), opts, opts.tag).ready();
    if (opts.stdin !== undefined) {
      if (opts.stdin.length) await h.sendStdin(opts.stdin);
      await h.closeStdin();
    }
    return opts.background ? h : h.wait();
  }

  /** @internal */
  async startPty(cmd: string[], o: RunOptions & { pty: { cols: number; rows: number } }) {
    const resp = await this.start(cmd, { ...o, stdin: new Uint8Array() });
    return new CommandHandle(this.s, this.events(resp), o, o.tag).ready();
  }

  /** Reattaches to a process by pid or tag, replaying its output. */
  async connect(
    target: { pid?: number; tag?: string },
    opts: Pick<RunOptions, "onStdout" | "onStderr"> = {},
  ): Promise<CommandHandle> {
    const resp = await this.s.conn.fetch(this.s.processPath(target, ":connect"));
    const h = new CommandHandle(this.s, this.events(resp), opts, target.tag);
    h.pid = target.pid ?? 0;
    return h.ready();
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

export class Files {
  constructor(private readonly s: Sandbox) {}

  /** Writes a whole file atomically. */
  async write(path: string, data: string | Uint8Array, o: { mode?: number } = {}): Promise<FileInfo> {
    const q = new URLSearchParams({ path, create_parents: "true" });
    if (o.mode) q.set("mode", String(o.mode));
    const resp = await this.s.conn.fetch(`${this.s.path}/files:write?${q}`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: bytes(data),
    });
    return fileInfo(((await resp.json()) as { info?: components["schemas"]["FileInfo"] }).info);
  }

  read(path: string, o?: { format?: "text" }): Promise<string>;
  read(path: string, o: { format: "bytes" }): Promise<Uint8Array>;
  async read(path: string, o: { format?: "text" | "bytes" } = {}): Promise<string | Uint8Array> {
    const resp = await this.s.conn.fetch(`${this.s.path}/files:read?${new URLSearchParams({ path })}`, {
      headers: { accept: "application/octet-stream" },
    });
    const bytes = new Uint8Array(await resp.arrayBuffer());
    return o.format === "bytes" ? bytes : new TextDecoder().decode(bytes);
  }

  async list(path = ".", depth = 1): Promise<FileInfo[]> {
    const r = await this.s.conn.unwrap(
      this.s.conn.api.GET("/v1/sandboxes/{sandboxId}/files:list", {
        params: { path: { sandboxId: this.s.sandboxId }, query: { path, depth } },
      }),
    );
    return (r.entries ?? []).map(fileInfo);
  }

  async stat(path: string): Promise<FileInfo> {
    const r = await this.s.conn.unwrap(
      this.s.conn.api.GET("/v1/sandboxes/{sandboxId}/files:stat", {
        params: { path: { sandboxId: this.s.sandboxId }, query: { path } },
      }),
    );
    return fileInfo(r.info);
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  async makeDir(path: string, parents = true): Promise<void> {
    await this.s.conn.unwrap(
      this.s.conn.api.POST("/v1/sandboxes/{sandboxId}/files:mkdir", {
        params: { path: { sandboxId: this.s.sandboxId } },
        body: { path, parents },
      }),
    );
  }

  async rename(from: string, to: string): Promise<void> {
    await this.s.conn.unwrap(
      this.s.conn.api.POST("/v1/sandboxes/{sandboxId}/files:move", {
        params: { path: { sandboxId: this.s.sandboxId } },
        body: { sourcePath: from, destinationPath: to },
      }),
    );
  }

  async remove(path: string, recursive = false): Promise<void> {
    await this.s.conn.unwrap(
      this.s.conn.api.DELETE("/v1/sandboxes/{sandboxId}/files", {
        params: { path: { sandboxId: this.s.sandboxId }, query: { path, recursive } },
      }),
    );
  }

  /** Yields changes under `path`; break the loop (or abort) to stop. */
  async *watch(path: string, o: { recursive?: boolean; signal?: AbortSignal } = {}) {
    const q = new URLSearchParams({ path, recursive: String(o.recursive ?? false) });
    const resp = await this.s.conn.fetch(`${this.s.path}/files:watch?${q}`, { signal: o.signal });
    for await (const line of ndjson(resp)) {
      yield {
        type: String(line.type ?? "").replace("FILE_EVENT_TYPE_", "").toLowerCase(),
        path: String(line.path ?? ""),
      };
    }
  }
}

export class PtyHandle extends CommandHandle {
  /** @internal */ sandboxRef!: Sandbox;

  async resize(size: { cols: number; rows: number }): Promise<void> {
    await this.sandboxRef.conn.fetch(this.sandboxRef.processPath({ pid: this.pid }, ":resize"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ size }),
    });
  }
}

export class Pty {
  constructor(private readonly s: Sandbox) {}

  /** A terminal: a login shell (or `cmd`) under a PTY. */
  async create(o: {
    cols?: number;
    rows?: number;
    cmd?: string[];
    envs?: Record<string, string>;
    cwd?: string;
    tag?: string;
    onData?: (data: string) => void;
  } = {}): Promise<PtyHandle> {
    const h = await this.s.commands.startPty(o.cmd ?? ["bash", "-l"], {
      envs: o.envs,
      cwd: o.cwd,
      tag: o.tag,
      onStdout: o.onData,
      pty: { cols: o.cols ?? 80, rows: o.rows ?? 24 },
    });
    const p = Object.setPrototypeOf(h, PtyHandle.prototype) as PtyHandle;
    p.sandboxRef = this.s;
    return p;
  }
}

export interface CreateOptions extends ConnectionOptions {
  image?: string;
  envs?: Record<string, string>;
  /** Auto-pause (by default) after this long. */
  timeoutMs?: number;
  cpuMillis?: number;
  memoryMib?: number;
  labels?: Record<string, string>;
  secrets?: string[];
  /** Wait until RUNNING (the default). */
  wait?: boolean;
  waitTimeoutMs?: number;
}

export class Sandbox {
  readonly commands = new Commands(this);
  readonly files = new Files(this);
  readonly pty = new Pty(this);

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

  static async create(o: CreateOptions = {}): Promise<Sandbox> {
    const conn = new Connection(o);
    const body: ApiSandbox = { image: o.image ?? "host" };
    if (o.envs) body.env = o.envs;
    if (o.labels) body.labels = o.labels;
    if (o.secrets) body.secretNames = o.secrets;
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
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
          query: wait ? { waitUntilRunning: true, waitTimeout: seconds(o.waitTimeoutMs ?? 60_000) } : {},
        },
        body,
      }),
    );
    return new Sandbox(info(r.sandbox!), conn);
  }

  static async connect(sandboxId: string, o: ConnectionOptions = {}): Promise<Sandbox> {
    const conn = new Connection(o);
    const r = await conn.unwrap(conn.api.GET("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId } } }));
    return new Sandbox(info(r.sandbox!), conn);
  }

  static async list(o: ConnectionOptions & { pageSize?: number; pageToken?: string } = {}) {
    const conn = new Connection(o);
    const r = await conn.unwrap(
      conn.api.GET("/v1/sandboxes", { params: { query: { pageSize: o.pageSize, pageToken: o.pageToken } } }),
    );
    return { sandboxes: (r.sandboxes ?? []).map(info), nextPageToken: r.nextPageToken ?? "" };
  }

  async getInfo(): Promise<SandboxInfo> {
    const r = await this.conn.unwrap(
      this.conn.api.GET("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId: this.sandboxId } } }),
    );
    this._info = info(r.sandbox!);
    return this._info;
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

  /** Deletes the sandbox and everything in it. */
  async kill(): Promise<void> {
    await this.conn.unwrap(
      this.conn.api.DELETE("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId: this.sandboxId } } }),
    );
  }

  async setTimeout(ms: number): Promise<void> {
    await this.conn.unwrap(
      this.conn.api.POST("/v1/sandboxes/{sandboxId}:setTimeout", {
        params: { path: { sandboxId: this.sandboxId } },
        body: { timeout: seconds(ms) },
      }),
    );
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
