import { describe, expect, it } from "vitest";
import { ApiError } from "./errors";
import { type StreamStatus, backoffDelay, eventRow, watch } from "./events";

const ndjson = (...lines: unknown[]) => new Response(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
const ev = (id: string, state: string) => ({ kind: "SANDBOX_EVENT_KIND_STATE_CHANGED", sandbox: { sandboxId: id, state } });

describe("backoffDelay", () => {
  it("doubles from 1 s up to 30 s, with jitter of ±25 %", () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 10].map((n) => backoffDelay(n, mid))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
    expect(backoffDelay(0, () => 0)).toBe(750);
    expect(backoffDelay(0, () => 1)).toBe(1250);
    expect(backoffDelay(50, () => 1)).toBe(37500);
  });
});

describe("watch", () => {
  it("reconnects with backoff after breaks and says when changes may have been missed", async () => {
    const sleeps: number[] = [];
    const statuses: StreamStatus["kind"][] = [];
    const events: unknown[] = [];
    let reconnects = 0;
    let opens = 0;
    let w: { close: () => void; done: Promise<void> } | undefined = undefined;
    w = watch({
      open: async () => {
        opens++;
        if (opens === 1) return ndjson(ev("sbx_a", "SANDBOX_STATE_RUNNING"));
        if (opens === 2) throw new ApiError("UNAVAILABLE", "gateway restarting");
        if (opens === 3) throw new TypeError("network down");
        if (opens === 4) return ndjson(ev("sbx_a", "SANDBOX_STATE_PAUSED"), { error: { code: 15, message: "lagged" } });
        w!.close();
        return ndjson();
      },
      onEvent: (e) => events.push(e.sandbox?.state),
      onStatus: (s) => statuses.push(s.kind),
      onReconnect: () => reconnects++,
      random: () => 0.5,
      sleep: async (ms) => void sleeps.push(ms),
    });
    await w.done;
    expect(events).toEqual(["SANDBOX_STATE_RUNNING", "SANDBOX_STATE_PAUSED"]);
    // The end of stream 1 (attempt 0), two failed opens (1, 2), then the
    // lagged stream 4 after a message (reset to 0).
    expect(sleeps).toEqual([1000, 2000, 4000, 1000]);
    expect(reconnects).toBe(2);
    expect(statuses.slice(0, 4)).toEqual(["connecting", "live", "retrying", "connecting"]);
  });

  it("stops on an error a reconnect cannot mend", async () => {
    const statuses: StreamStatus[] = [];
    let opens = 0;
    const w = watch({
      open: async () => {
        opens++;
        throw new ApiError("UNAUTHENTICATED", "session expired");
      },
      onEvent: () => {},
      onStatus: (s) => statuses.push(s),
      sleep: async () => {},
    });
    await w.done;
    expect(opens).toBe(1);
    expect(statuses.at(-1)).toEqual({ kind: "stopped", error: "session expired" });
  });

  it("ends when closed, without another attempt", async () => {
    let opens = 0;
    let release: () => void = () => {};
    const w = watch({
      open: (signal) =>
        new Promise((_, reject) => {
          opens++;
          release = () => reject(new DOMException("aborted", "AbortError"));
          signal.addEventListener("abort", () => release());
        }),
      onEvent: () => {},
    });
    await Promise.resolve();
    w.close();
    await w.done;
    expect(opens).toBe(1);
  });
});

describe("eventRow", () => {
  it("keeps the event's time, kind, state and message; a kindless event is a state change", () => {
    expect(
      eventRow({ eventTime: "2026-12-07T10:00:00Z", kind: "SANDBOX_EVENT_KIND_IDLE_PAUSED", message: "idle 60s", sandbox: { state: "SANDBOX_STATE_PAUSED" } }),
    ).toEqual({ time: "2026-12-07T10:00:00Z", kind: "SANDBOX_EVENT_KIND_IDLE_PAUSED", state: "SANDBOX_STATE_PAUSED", message: "idle 60s" });
    expect(eventRow({}, () => "now")).toEqual({ time: "now", kind: "SANDBOX_EVENT_KIND_STATE_CHANGED", state: undefined, message: "" });
  });
});
