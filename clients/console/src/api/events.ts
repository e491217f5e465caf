/**
 * The sandbox event stream (`GET /v1/sandbox-events`, NDJSON): kept open,
 * and opened again with a growing, jittered delay when it breaks. A
 * stream that was reopened may have missed changes, so `onReconnect`
 * tells the caller to read the list again.
 */
import { ApiError, isAbort } from "./errors";
import { messages } from "./ndjson";
import type { Api, Schemas } from "./client";

export type SandboxEvent = Schemas["WatchSandboxEventsResponse"];

/** An event as a sandbox's page lists it. */
export interface EventRow {
  time: string;
  kind: string;
  state: NonNullable<SandboxEvent["sandbox"]>["state"];
  message: string;
}

export function eventRow(ev: SandboxEvent, now: () => string = () => new Date().toISOString()): EventRow {
  return {
    time: ev.eventTime ?? now(),
    kind: ev.kind ?? "SANDBOX_EVENT_KIND_STATE_CHANGED",
    state: ev.sandbox?.state,
    message: ev.message ?? "",
  };
}

export type StreamStatus =
  | { kind: "connecting" }
  | { kind: "live" }
  | { kind: "retrying"; inMs: number; error: string }
  | { kind: "stopped"; error: string };

/** The delay before attempt `n` (0-based): 1 s, 2 s, 4 s… up to 30 s, ±25 %. */
export function backoffDelay(n: number, random: () => number = Math.random, baseMs = 1000, maxMs = 30_000): number {
  const raw = Math.min(maxMs, baseMs * 2 ** Math.min(n, 16));
  return Math.round(raw * (0.75 + random() * 0.5));
}

/** Errors a reconnect cannot mend: the session, the role, a bad request. */
function fatal(e: unknown): boolean {
  return (
    e instanceof ApiError &&
    ["UNAUTHENTICATED", "PERMISSION_DENIED", "INVALID_ARGUMENT", "NOT_FOUND", "UNIMPLEMENTED"].includes(e.code)
  );
}

export interface WatchOptions {
  /** Opens the stream (the response once it is OK). */
  open: (signal: AbortSignal) => Promise<Response>;
  onEvent: (ev: SandboxEvent) => void;
  onStatus?: (s: StreamStatus) => void;
  /** The stream was opened again after a break: changes may have been missed. */
  onReconnect?: () => void;
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });

/** Follows the stream until `close()`. */
export function watch(o: WatchOptions): { close: () => void; done: Promise<void> } {
  const ctl = new AbortController();
  const sleep = o.sleep ?? abortableSleep;
  const status = (s: StreamStatus) => o.onStatus?.(s);
  const done = (async () => {
    let attempt = 0;
    let opened = false;
    while (!ctl.signal.aborted) {
      status({ kind: "connecting" });
      let error: unknown;
      try {
        const resp = await o.open(ctl.signal);
        if (opened) o.onReconnect?.();
        opened = true;
        status({ kind: "live" });
        for await (const m of messages(resp)) {
          attempt = 0;
          o.onEvent(m as SandboxEvent);
        }
        error = new ApiError("UNAVAILABLE", "the event stream ended");
      } catch (e) {
        error = e;
      }
      if (ctl.signal.aborted || isAbort(error)) break;
      const message = error instanceof Error ? error.message : String(error);
      if (fatal(error)) {
        status({ kind: "stopped", error: message });
        return;
      }
      const inMs = backoffDelay(attempt++, o.random);
      status({ kind: "retrying", inMs, error: message });
      await sleep(inMs, ctl.signal);
    }
  })();
  return { close: () => ctl.abort(), done };
}

/** The tenant's events (or one sandbox's) through the console's API. */
export function watchSandboxes(
  api: Api,
  handlers: Omit<WatchOptions, "open">,
  sandboxId?: string,
): { close: () => void; done: Promise<void> } {
  const q = sandboxId ? `?sandboxId=${encodeURIComponent(sandboxId)}` : "";
  return watch({
    ...handlers,
    open: (signal) => api.fetch(`/v1/sandbox-events${q}`, { headers: { accept: "application/x-ndjson" }, signal }),
  });
}
