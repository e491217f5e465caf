/**
 * The console's connection to the gateway: one openapi-fetch client over
 * the generated types, and one `send` that every request goes through,
 * typed calls and streams alike. It sends the session cookie (same
 * origin), adds `X-CSRF-Token` to every state-changing request, turns
 * failures into ApiErrors, and reports a 401 so the app can send the
 * person to sign in.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "../generated/schema";
import { ApiError, STALE_TOKEN_MESSAGE, errorFromBody, errorFromResponse, isAbort } from "./errors";

export type Schemas = components["schemas"];

export const CSRF_HEADER = "X-CSRF-Token";
const CSRF_KEY = "talon.csrf";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
/** Signing in answers 401 for a wrong password: that is no ended session. */
const SIGN_IN = "/v1/auth/browser-session";

/** Where the CSRF token is kept between page loads of one tab. */
export interface TokenStore {
  get(): string | null;
  set(token: string | null): void;
}

/** A store over a Storage (sessionStorage in the browser). */
export function storageTokens(storage: Pick<Storage, "getItem" | "setItem" | "removeItem">): TokenStore {
  return {
    get: () => {
      try {
        return storage.getItem(CSRF_KEY);
      } catch {
        return null;
      }
    },
    set: (t) => {
      try {
        if (t) storage.setItem(CSRF_KEY, t);
        else storage.removeItem(CSRF_KEY);
      } catch {
        /* storage refused (private mode): the token lives in memory only */
      }
    },
  };
}

/** A store in memory only (tests, or a browser without sessionStorage). */
export function memoryTokens(initial: string | null = null): TokenStore {
  let t = initial;
  return { get: () => t, set: (v) => void (t = v) };
}

export interface ApiOptions {
  /** The gateway's origin: `location.origin` in the browser. */
  baseUrl: string;
  csrf: TokenStore;
  fetch?: (req: Request) => Promise<Response>;
  /** A request came back 401: the session ended (or never was). */
  onUnauthenticated?: (e: ApiError) => void;
  /**
   * A change was refused for this tab's CSRF token (another tab signed in
   * again, replacing the shared cookie): the token is dropped first.
   */
  onStaleToken?: () => void;
}

type Result<T> = { data?: T; error?: unknown; response: Response };

export class Api {
  readonly client: Client<paths>;
  readonly csrf: TokenStore;
  readonly baseUrl: string;
  private readonly fetchImpl: (req: Request) => Promise<Response>;
  private readonly onUnauthenticated?: (e: ApiError) => void;
  private readonly onStaleToken?: () => void;

  constructor(o: ApiOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.csrf = o.csrf;
    this.fetchImpl = o.fetch ?? ((req) => globalThis.fetch(req));
    this.onUnauthenticated = o.onUnauthenticated;
    this.onStaleToken = o.onStaleToken;
    this.client = createClient<paths>({
      baseUrl: this.baseUrl,
      credentials: "same-origin",
      fetch: (req: Request) => this.send(req),
    });
  }

  /** Every request of the console goes through here. */
  async send(req: Request): Promise<Response> {
    if (!SAFE.has(req.method.toUpperCase())) {
      const token = this.csrf.get();
      if (token) req.headers.set(CSRF_HEADER, token);
    }
    let resp: Response;
    try {
      resp = await this.fetchImpl(req);
    } catch (e) {
      if (isAbort(e)) throw e;
      const why = e instanceof Error ? e.message : String(e);
      throw new ApiError("UNAVAILABLE", `Cannot reach the gateway (${why}). Check your connection and try again.`);
    }
    if (resp.status === 401 && !(req.method === "POST" && new URL(req.url).pathname === SIGN_IN)) {
      const err = await errorFromResponse(resp.clone());
      this.onUnauthenticated?.(err);
    } else if (resp.status === 403 && !SAFE.has(req.method.toUpperCase())) {
      const err = await errorFromResponse(resp.clone());
      if (err.message === STALE_TOKEN_MESSAGE) {
        this.csrf.set(null);
        this.onStaleToken?.();
      }
    }
    return resp;
  }

  /** The data of a typed call, or its ApiError. */
  async call<T>(p: Promise<Result<T>>): Promise<T> {
    const { data, error, response } = await p;
    if (!response.ok) {
      throw errorFromBody(response.status, error, response.headers.get("x-request-id") ?? undefined);
    }
    return data as T;
  }

  /**
   * A request by path (streams, and calls whose body openapi-fetch does
   * not frame): the response once it is OK, else its ApiError.
   */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const req = new Request(this.baseUrl + path, { credentials: "same-origin", ...init });
    const resp = await this.send(req);
    if (!resp.ok) throw await errorFromResponse(resp);
    return resp;
  }

  /** A JSON POST by path, answered by a stream. */
  postStream(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    return this.fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/x-ndjson" },
      body: JSON.stringify(body),
      signal,
    });
  }
}

/** A path segment, escaped. */
export const seg = (s: string): string => encodeURIComponent(s);
