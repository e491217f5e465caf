/**
 * The platform's own figures over time (GetPlatformMetrics). The API
 * answers one sample at a time: platform-wide counts of sandboxes and
 * workers by state, and the answering server's Prometheus families since
 * it started. So the page keeps the last samples itself and turns the
 * counters into rates from their increase between two samples of the same
 * server (each server counts its own; a counter that went down means that
 * server restarted, so its new value is all increase). Pure, so the
 * arithmetic is tested without a browser.
 */
import type { PlatformMetrics } from "../api/admin";
import { linePoints } from "./series";

/** One series of a family: a counter's or gauge's value, a histogram's count and sum. */
export interface Point { labels: Record<string, string>; value: number; count: number; sum: number }

/** One answer, read: int64s arrive as strings, zeros may be left out. */
export interface Snapshot {
  t: number;
  serverId: string;
  sandboxes: Record<string, number>;
  workers: Record<string, number>;
  families: Record<string, Point[]>;
}

/** The families the page reads (server/src/metrics.rs). */
export const FAMILY = {
  rpcs: "talon_rpc_requests_total",
  rpcSeconds: "talon_rpc_duration_seconds",
  logins: "talon_logins_total",
  poolHits: "sandbox_prewarm_hits_total",
  poolMisses: "sandbox_prewarm_misses_total",
  moved: "talon_failover_sandboxes_moved_total",
  waiting: "talon_failover_waiting_sandboxes",
  workersConnected: "talon_workers_connected",
} as const;

const num = (v: string | number | undefined | null): number => (Number.isFinite(Number(v ?? 0)) ? Number(v ?? 0) : 0);

const counts = (m: Record<string, string> | undefined): Record<string, number> =>
  Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, num(v)]));

export function snapshotOf(m: PlatformMetrics): Snapshot | null {
  const t = m.sampleTime ? Date.parse(m.sampleTime) : NaN;
  if (!Number.isFinite(t)) return null;
  const families: Record<string, Point[]> = {};
  for (const f of m.families ?? []) {
    if (!f.name) continue;
    families[f.name] = (f.samples ?? []).map((s) => ({
      labels: s.labels ?? {},
      value: num(s.value),
      count: num(s.count),
      sum: num(s.sum),
    }));
  }
  return { t, serverId: m.serverId ?? "", sandboxes: counts(m.sandboxesByState), workers: counts(m.workersByState), families };
}

/** A counter's increase from `before` to `now`; lower means a restart, so all of `now`. */
export function increase(now: number, before: number): number {
  return now >= before ? now - before : Math.max(now, 0);
}

type Labels = Record<string, string>;
type Keep = (labels: Labels) => boolean;
const all: Keep = () => true;
const keyOf = (l: Labels) => JSON.stringify(Object.keys(l).sort().map((k) => [k, l[k]]));

/** A histogram series' increase of count and sum (a lower count means a restart). */
function histIncrease(p: Point, q: Point | undefined): { count: number; sum: number } {
  if (q && p.count >= q.count) return { count: p.count - q.count, sum: Math.max(p.sum - q.sum, 0) };
  return { count: p.count, sum: Math.max(p.sum, 0) };
}

/**
 * The increase of a family's series (those `keep` keeps) from `prev` to
 * `cur`, summed; null when neither sample has the family. A series new in
 * `cur` counts from 0.
 */
export function familyIncrease(prev: Snapshot, cur: Snapshot, name: string, keep: Keep = all) {
  const a = prev.families[name];
  const b = cur.families[name];
  if (!a && !b) return null;
  const before = new Map((a ?? []).map((p) => [keyOf(p.labels), p]));
  const out = { value: 0, count: 0, sum: 0 };
  for (const p of b ?? []) {
    if (!keep(p.labels)) continue;
    const q = before.get(keyOf(p.labels));
    out.value += increase(p.value, q?.value ?? 0);
    const h = histIncrease(p, q);
    out.count += h.count;
    out.sum += h.sum;
  }
  return out;
}

/** For each sample, the last earlier one of the same server (counters are per server), or null. */
export function previous(samples: Snapshot[]): (Snapshot | null)[] {
  const last = new Map<string, Snapshot>();
  return samples.map((s) => {
    const p = last.get(s.serverId) ?? null;
    last.set(s.serverId, s);
    return p;
  });
}

/** A figure per sample, from the interval since that server's previous sample (null for the first). */
function perInterval(samples: Snapshot[], f: (p: Snapshot, c: Snapshot, secs: number) => number | null): (number | null)[] {
  const prev = previous(samples);
  return samples.map((c, i) => {
    const p = prev[i];
    const secs = p ? (c.t - p.t) / 1000 : 0;
    return p && secs > 0 ? f(p, c, secs) : null;
  });
}

const perSecond = (name: string, keep: Keep = all) => (samples: Snapshot[]) =>
  perInterval(samples, (p, c, secs) => {
    const d = familyIncrease(p, c, name, keep);
    return d ? d.value / secs : null;
  });

/** RPCs per second, over every method and code. */
export const rpcRate = perSecond(FAMILY.rpcs);
/** RPCs per second that ended with another code than OK. */
export const rpcErrorRate = perSecond(FAMILY.rpcs, (l) => l.code !== "OK");

/** Mean RPC latency per interval, in ms; null for an interval without calls. */
export function rpcLatencyMs(samples: Snapshot[]): (number | null)[] {
  return perInterval(samples, (p, c) => {
    const d = familyIncrease(p, c, FAMILY.rpcSeconds);
    return d && d.count > 0 ? (d.sum / d.count) * 1000 : null;
  });
}

export const LOGIN_OUTCOMES = ["ok", "failed", "throttled"] as const;
export type LoginOutcome = (typeof LOGIN_OUTCOMES)[number];

/** Password sign-ins per second, by outcome. */
export function loginRates(samples: Snapshot[]): Record<LoginOutcome, (number | null)[]> {
  const out = {} as Record<LoginOutcome, (number | null)[]>;
  for (const o of LOGIN_OUTCOMES) out[o] = perSecond(FAMILY.logins, (l) => l.outcome === o)(samples);
  return out;
}

/** Creates served from a prewarm pool, of all pooled creates, per interval (0–1); null without any. */
export function poolHitRatio(samples: Snapshot[]): (number | null)[] {
  return perInterval(samples, (p, c) => {
    const hits = familyIncrease(p, c, FAMILY.poolHits)?.value ?? 0;
    const misses = familyIncrease(p, c, FAMILY.poolMisses)?.value ?? 0;
    return hits + misses > 0 ? hits / (hits + misses) : null;
  });
}

/** Sandboxes moved off lost workers, per interval (a count, not a rate). */
export function failoverMoves(samples: Snapshot[]): (number | null)[] {
  return perInterval(samples, (p, c) => familyIncrease(p, c, FAMILY.moved)?.value ?? null);
}

/** A gauge's value per sample, summed over its series; null where the family is missing. */
export function gauge(samples: Snapshot[], name: string): (number | null)[] {
  return samples.map((s) => {
    const f = s.families[name];
    return f ? f.reduce((n, p) => n + p.value, 0) : null;
  });
}

export const SANDBOX_GROUPS = ["running", "paused", "stopped", "failed", "others"] as const;
export const WORKER_GROUPS = ["active", "draining", "offline", "lost", "others"] as const;
export type SandboxGroup = (typeof SANDBOX_GROUPS)[number];
export type WorkerGroup = (typeof WORKER_GROUPS)[number];

/** Counts by state in the groups named (by the state's suffix), the rest in "others". */
function grouped<G extends string>(byState: Record<string, number>, prefix: string, groups: readonly G[]): Record<G, number> {
  const out = Object.fromEntries(groups.map((g) => [g, 0])) as Record<G, number>;
  for (const [state, n] of Object.entries(byState)) {
    const g = state.replace(prefix, "").toLowerCase() as G;
    out[groups.includes(g) && g !== "others" ? g : ("others" as G)] += n;
  }
  return out;
}

export const sandboxGroups = (s: Snapshot) => grouped(s.sandboxes, "SANDBOX_STATE_", SANDBOX_GROUPS);
export const workerGroups = (s: Snapshot) => grouped(s.workers, "WORKER_STATE_", WORKER_GROUPS);

function overTime<G extends string>(samples: Snapshot[], groups: readonly G[], of: (s: Snapshot) => Record<G, number>) {
  const rows = samples.map(of);
  return Object.fromEntries(groups.map((g) => [g, rows.map((r) => r[g])])) as Record<G, number[]>;
}

/** Sandboxes by state over time (platform-wide, the deleted left out). */
export const sandboxesOverTime = (samples: Snapshot[]) => overTime(samples, SANDBOX_GROUPS, sandboxGroups);
/** Workers by state over time. */
export const workersOverTime = (samples: Snapshot[]) => overTime(samples, WORKER_GROUPS, workerGroups);

/** A method's calls and errors, and its histogram's count and sum (s), since the page opened. */
export interface MethodTotals { calls: number; errors: number; count: number; sum: number }
export interface MethodRow { method: string; calls: number; errors: number; meanMs: number | null }

/** Adds each method's calls, errors and latency from `prev` to `cur` into `into`. */
export function addMethods(into: Map<string, MethodTotals>, prev: Snapshot, cur: Snapshot): void {
  const at = (m: string) => {
    let t = into.get(m);
    if (!t) into.set(m, (t = { calls: 0, errors: 0, count: 0, sum: 0 }));
    return t;
  };
  const before = (name: string) => new Map((prev.families[name] ?? []).map((p) => [keyOf(p.labels), p]));
  const calls = before(FAMILY.rpcs);
  for (const p of cur.families[FAMILY.rpcs] ?? []) {
    const n = increase(p.value, calls.get(keyOf(p.labels))?.value ?? 0);
    if (!n) continue;
    const t = at(p.labels.method ?? "");
    t.calls += n;
    if (p.labels.code !== "OK") t.errors += n;
  }
  const took = before(FAMILY.rpcSeconds);
  for (const p of cur.families[FAMILY.rpcSeconds] ?? []) {
    const h = histIncrease(p, took.get(keyOf(p.labels)));
    if (!h.count) continue;
    const t = at(p.labels.method ?? "");
    t.count += h.count;
    t.sum += h.sum;
  }
}

/** The `n` methods called most, with their mean latency in ms (null without timed calls). */
export function topMethods(totals: Map<string, MethodTotals>, n = 10): MethodRow[] {
  return [...totals]
    .filter(([, t]) => t.calls > 0)
    .map(([method, t]) => ({ method, calls: t.calls, errors: t.errors, meanMs: t.count > 0 ? (t.sum / t.count) * 1000 : null }))
    .sort((a, b) => b.calls - a.calls || a.method.localeCompare(b.method))
    .slice(0, n);
}

/** "/talon.v1.SandboxService/CreateSandbox" → "SandboxService/CreateSandbox". */
export const shortMethod = (m: string) => m.replace(/^\/talon\.v1\./, "") || "—";

/**
 * The last `capacity` answers, oldest first; an answer not newer than the
 * last is ignored (a repeated or late one). Method totals since the page
 * opened are kept apart, so they outlive the samples dropped.
 */
export class MetricsHistory {
  readonly samples: Snapshot[] = [];
  private readonly last = new Map<string, Snapshot>();
  private readonly methods = new Map<string, MethodTotals>();
  constructor(readonly capacity = 150) {}

  push(m: PlatformMetrics): boolean {
    const s = snapshotOf(m);
    const tail = this.samples[this.samples.length - 1];
    if (!s || (tail && s.t <= tail.t)) return false;
    const prev = this.last.get(s.serverId);
    if (prev) addMethods(this.methods, prev, s);
    this.last.set(s.serverId, s);
    this.samples.push(s);
    if (this.samples.length > this.capacity) this.samples.shift();
    return true;
  }

  topMethods(n = 10): MethodRow[] {
    return topMethods(this.methods, n);
  }
}

/**
 * The polylines of `values` in a `width` × `height` box, from 0 to `max`
 * (the largest known value when not given), broken where a value is null.
 * A lone point is drawn as a dot (the point twice, with round caps).
 */
export function lineSegments(values: (number | null)[], width: number, height: number, max?: number): string[] {
  const known = values.filter((v): v is number => v !== null);
  if (!known.length) return [];
  const pts = linePoints(values.map((v) => v ?? 0), width, height, max ?? Math.max(...known)).split(" ");
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length) out.push((run.length === 1 ? [run[0], run[0]] : run).join(" "));
    run = [];
  };
  values.forEach((v, i) => (v === null ? flush() : run.push(pts[i])));
  flush();
  return out;
}

/** The last value of a series (null when none). */
export const latest = (values: (number | null)[]): number | null => values[values.length - 1] ?? null;

/** A figure in a short form with its unit; "—" when unknown. */
export function figure(v: number | null | undefined, unit = ""): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  const a = Math.abs(v);
  const s = a === 0 || Number.isInteger(v) ? String(v) : a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  return unit ? `${s} ${unit}` : s;
}

/** A ratio (0–1) as a percentage; "—" when unknown. */
export const percent = (r: number | null | undefined) =>
  r === null || r === undefined || !Number.isFinite(r) ? "—" : `${+(r * 100).toFixed(1)} %`;
