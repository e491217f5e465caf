/**
 * The sandbox's Chromium, for Playwright or Puppeteer over CDP.
 */
import type { Sandbox } from "./sandbox.js";
import { seconds } from "./transport.js";

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
