/**
 * The Sandbox: its lifecycle (create, connect, list, pause, kill), snapshots
 * and forks, previews and file URLs; its areas (commands, files, …) live in
 * their own modules and reach the server through `sandbox.conn`.
 */
import type { components } from "./generated/schema.js";
import { Agent } from "./agent.js";
import { Browser } from "./browser.js";
import { Code } from "./code.js";
import { Commands } from "./commands.js";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from "./errors.js";
import { Files } from "./files.js";
import { Pty } from "./pty.js";
import { Connection, type ConnectionOptions, enc, seconds } from "./transport.js";

export type ApiSandbox = components["schemas"]["Sandbox"];

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

const STATES = ["pending", "starting", "running", "paused", "stopping", "stopped", "failed", "deleted"];

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
