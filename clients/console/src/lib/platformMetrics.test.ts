/**
 * The platform metrics' arithmetic: rates from two samples, counter resets
 * (a restarted server never gives a negative rate), intervals without calls
 * (null, not NaN), missing families, repeated or late answers, and the
 * top-methods table.
 */
import { describe, expect, it } from "vitest";
import type { PlatformMetrics } from "../api/admin";
import {
  MetricsHistory,
  failoverMoves,
  figure,
  gauge,
  increase,
  lineSegments,
  loginRates,
  percent,
  poolHitRatio,
  rpcErrorRate,
  rpcLatencyMs,
  rpcRate,
  sandboxesOverTime,
  shortMethod,
  snapshotOf,
  workersOverTime,
} from "./platformMetrics";

const CREATE = "/talon.v1.SandboxService/CreateSandbox";
const LIST = "/talon.v1.SandboxService/ListSandboxes";
const T0 = Date.parse("2026-12-07T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

type Calls = Record<string, { ok?: number; bad?: number; count?: number; sum?: number }>;

/** An answer of `server` at `s` seconds, with RPCs per method and other families as given. */
function answer(s: number, calls: Calls, extra: PlatformMetrics["families"] = [], server = "srv-a"): PlatformMetrics {
  const methods = Object.entries(calls);
  return {
    serverId: server,
    sampleTime: at(s),
    sandboxesByState: { SANDBOX_STATE_RUNNING: "4", SANDBOX_STATE_PAUSED: "1", SANDBOX_STATE_STARTING: "2" },
    workersByState: { WORKER_STATE_ACTIVE: "2", WORKER_STATE_LOST: "1" },
    families: [
      {
        name: "talon_rpc_requests_total",
        kind: "METRIC_KIND_COUNTER",
        samples: methods.flatMap(([method, c]) => [
          { labels: { method, code: "OK" }, value: c.ok ?? 0 },
          { labels: { method, code: "NOT_FOUND" }, value: c.bad ?? 0 },
        ]),
      },
      {
        name: "talon_rpc_duration_seconds",
        kind: "METRIC_KIND_HISTOGRAM",
        samples: methods.map(([method, c]) => ({ labels: { method }, count: String(c.count ?? 0), sum: c.sum ?? 0 })),
      },
      ...(extra ?? []),
    ],
  };
}

const counter = (name: string, samples: { labels?: Record<string, string>; value?: number }[]) => ({
  name,
  kind: "METRIC_KIND_COUNTER" as const,
  samples,
});

const history = (...answers: PlatformMetrics[]) => {
  const h = new MetricsHistory();
  for (const a of answers) h.push(a);
  return h;
};

describe("rates", () => {
  it("are the counters' increase over the seconds between two samples", () => {
    const h = history(
      answer(0, { [CREATE]: { ok: 10, bad: 2, count: 12, sum: 1.2 } }),
      answer(5, { [CREATE]: { ok: 30, bad: 7, count: 37, sum: 3.7 } }),
    );
    expect(rpcRate(h.samples)).toEqual([null, 5]);
    expect(rpcErrorRate(h.samples)).toEqual([null, 1]);
    expect(rpcLatencyMs(h.samples)[1]).toBeCloseTo(100);
  });

  it("never go negative when a counter restarts: the new value counts from 0", () => {
    expect(increase(3, 100)).toBe(3);
    const h = history(
      answer(0, { [CREATE]: { ok: 100, bad: 10, count: 110, sum: 11 } }),
      answer(10, { [CREATE]: { ok: 20, bad: 0, count: 20, sum: 0.4 } }),
    );
    expect(rpcRate(h.samples)).toEqual([null, 2]);
    expect(rpcErrorRate(h.samples)).toEqual([null, 0]);
    expect(rpcLatencyMs(h.samples)[1]).toBeCloseTo(20);
  });

  it("give a null latency, not NaN, for an interval without calls", () => {
    const same = { [CREATE]: { ok: 5, count: 5, sum: 0.5 } };
    const h = history(answer(0, same), answer(5, same));
    expect(rpcRate(h.samples)).toEqual([null, 0]);
    expect(rpcLatencyMs(h.samples)).toEqual([null, null]);
    expect(figure(rpcLatencyMs(h.samples)[1], "ms")).toBe("—");
  });

  it("count logins by outcome, the pool's hit ratio and failover moves", () => {
    const logins = (ok: number, failed: number) =>
      counter("talon_logins_total", [
        { labels: { outcome: "ok" }, value: ok },
        { labels: { outcome: "failed" }, value: failed },
      ]);
    const pool = (w1: [number, number], w2: [number, number]) => [
      counter("sandbox_prewarm_hits_total", [{ labels: { worker: "w1" }, value: w1[0] }, { labels: { worker: "w2" }, value: w2[0] }]),
      counter("sandbox_prewarm_misses_total", [{ labels: { worker: "w1" }, value: w1[1] }, { labels: { worker: "w2" }, value: w2[1] }]),
    ];
    const h = history(
      answer(0, {}, [logins(1, 0), ...pool([0, 0], [5, 5]), counter("talon_failover_sandboxes_moved_total", [{ value: 2 }])]),
      answer(2, {}, [logins(3, 4), ...pool([3, 0], [6, 5]), counter("talon_failover_sandboxes_moved_total", [{ value: 5 }])]),
    );
    const l = loginRates(h.samples);
    expect(l.ok).toEqual([null, 1]);
    expect(l.failed).toEqual([null, 2]);
    expect(l.throttled).toEqual([null, 0]);
    expect(poolHitRatio(h.samples)).toEqual([null, 1]);
    expect(failoverMoves(h.samples)).toEqual([null, 3]);
  });

  it("are taken between samples of the same server only", () => {
    const h = history(
      answer(0, { [CREATE]: { ok: 10 } }, [], "a"),
      answer(5, { [CREATE]: { ok: 1000 } }, [], "b"),
      answer(10, { [CREATE]: { ok: 20 } }, [], "a"),
    );
    expect(rpcRate(h.samples)).toEqual([null, null, 1]);
  });
});

describe("missing families", () => {
  it("give null (shown as —) rather than 0 or NaN", () => {
    const bare = (s: number): PlatformMetrics => ({ serverId: "a", sampleTime: at(s) });
    const h = history(bare(0), bare(5));
    for (const f of [rpcRate, rpcErrorRate, rpcLatencyMs, poolHitRatio, failoverMoves]) expect(f(h.samples)).toEqual([null, null]);
    expect(loginRates(h.samples).ok).toEqual([null, null]);
    expect(gauge(h.samples, "talon_workers_connected")).toEqual([null, null]);
    expect(sandboxesOverTime(h.samples).running).toEqual([0, 0]);
    expect(h.topMethods()).toEqual([]);
    expect(figure(null)).toBe("—");
    expect(percent(null)).toBe("—");
  });

  it("count a family's first series from 0", () => {
    const h = history(
      { serverId: "srv-a", sampleTime: at(0) },
      answer(4, {}, [counter("talon_logins_total", [{ labels: { outcome: "ok" }, value: 8 }])]),
    );
    expect(loginRates(h.samples).ok).toEqual([null, 2]);
  });
});

describe("MetricsHistory", () => {
  it("ignores repeated, late and unreadable answers and keeps the last N", () => {
    const h = new MetricsHistory(2);
    expect(h.push(answer(5, {}))).toBe(true);
    expect(h.push(answer(5, {}))).toBe(false);
    expect(h.push(answer(3, {}))).toBe(false);
    expect(h.push({ serverId: "a" })).toBe(false);
    expect(h.push(answer(10, {}))).toBe(true);
    expect(h.push(answer(15, {}))).toBe(true);
    expect(h.samples.map((s) => s.t)).toEqual([T0 + 10_000, T0 + 15_000]);
  });

  it("reads states, int64 strings and left-out zeros", () => {
    const s = snapshotOf(answer(0, {}))!;
    expect(s.sandboxes.SANDBOX_STATE_RUNNING).toBe(4);
    const h = history(answer(0, {}));
    expect(sandboxesOverTime(h.samples)).toEqual({ running: [4], paused: [1], stopped: [0], failed: [0], others: [2] });
    expect(workersOverTime(h.samples)).toEqual({ active: [2], draining: [0], offline: [0], lost: [1], others: [0] });
  });
});

describe("top methods", () => {
  it("sums calls, errors and latency since the page opened, most called first, top N", () => {
    const h = history(
      answer(0, { [CREATE]: { ok: 100, count: 100, sum: 50 }, [LIST]: { ok: 5, count: 5, sum: 1 } }),
      answer(5, { [CREATE]: { ok: 102, bad: 1, count: 103, sum: 50.3 }, [LIST]: { ok: 15, count: 15, sum: 1.1 } }),
      answer(10, { [CREATE]: { ok: 103, bad: 1, count: 104, sum: 50.4 }, [LIST]: { ok: 25, count: 25, sum: 1.2 } }),
    );
    const rows = h.topMethods();
    expect(rows.map((r) => [r.method, r.calls, r.errors])).toEqual([
      [LIST, 20, 0],
      [CREATE, 4, 1],
    ]);
    expect(rows[0].meanMs).toBeCloseTo(10);
    expect(rows[1].meanMs).toBeCloseTo(100);
    expect(h.topMethods(1)).toHaveLength(1);
    expect(shortMethod(CREATE)).toBe("SandboxService/CreateSandbox");
  });

  it("keeps at most ten, and a restart adds the new counts", () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`/talon.v1.S/M${i}`, { ok: n * (i + 1) }]));
    const h = history(answer(0, many(10)), answer(5, many(1)));
    const rows = h.topMethods();
    expect(rows).toHaveLength(10);
    expect(rows[0]).toEqual({ method: "/talon.v1.S/M11", calls: 12, errors: 0, meanMs: null });
  });
});

describe("lineSegments", () => {
  it("breaks the line where a value is unknown and draws a lone point as a dot", () => {
    expect(lineSegments([0, 10, null, 5, null], 40, 10)).toEqual(["0,10 10,0", "30,5 30,5"]);
    expect(lineSegments([null, null], 10, 10)).toEqual([]);
    expect(lineSegments([1, 2], 10, 10, 4)).toEqual(["0,7.5 10,5"]);
  });
});
