/**
 * The connection to the REST gateway: credentials, failover across several
 * servers, openapi-fetch for unary calls and plain fetch for streams and
 * raw bodies; plus the small encoders the areas share.
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./generated/schema.js";
import { AuthenticationError, InvalidArgumentError, UnavailableError, errorFrom, failure } from "./errors.js";

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

export class Connection {
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
export async function* ndjson(resp: Response): AsyncGenerator<Record<string, unknown>> {
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
export const bytes = (d: string | Uint8Array): ArrayBuffer => {
  const u = typeof d === "string" ? new TextEncoder().encode(d) : d;
  return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
};
export const b64 = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
export const seconds = (ms: number): string => `${ms / 1000}s`;
export const enc = encodeURIComponent;
