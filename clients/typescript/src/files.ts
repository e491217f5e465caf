/**
 * The sandbox's filesystem: `sandbox.files` reads and writes whole files
 * (raw bodies), lists, moves and removes, and watches directories.
 */
import type { components } from "./generated/schema.js";
import { NotFoundError, errorFrom } from "./errors.js";
import type { Sandbox } from "./sandbox.js";
import { bytes, ndjson } from "./transport.js";

/** One file of `files.writeFiles`. */
export interface WriteEntry {
  path: string;
  data: string | Uint8Array;
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
