/**
 * The sandbox list's state and how events change it: a pure reducer, so
 * the live list is tested without a browser or a server. Rows are kept
 * newest first (ListSandboxes' order) and unique by id.
 */
import type { SandboxEvent } from "../api/events";
import type { ListFilter, Sandbox, SandboxState } from "../api/sandboxes";

/** Whether a sandbox belongs in a list with this filter. */
export function matches(s: Sandbox, f: ListFilter): boolean {
  const state = s.state ?? "SANDBOX_STATE_UNSPECIFIED";
  if (f.states.length ? !f.states.includes(state) : state === "SANDBOX_STATE_DELETED") return false;
  for (const [k, v] of Object.entries(f.labels)) if (s.labels?.[k] !== v) return false;
  for (const [k, v] of Object.entries(f.metadata)) if (s.metadata?.[k] !== v) return false;
  return true;
}

const time = (t: string | undefined): number => (t ? Date.parse(t) || 0 : 0);

/** Newest first; ties by id, so the order is stable. */
function before(a: Sandbox, b: Sandbox): boolean {
  const d = time(a.createTime) - time(b.createTime);
  return d !== 0 ? d > 0 : (a.sandboxId ?? "") > (b.sandboxId ?? "");
}

/** -1, 0 or 1: how `next` compares with `prev` in age (generation, then update time). */
function age(next: Sandbox, prev: Sandbox): number {
  const g = BigInt(next.generation || "0") - BigInt(prev.generation || "0");
  if (g !== 0n) return g > 0n ? 1 : -1;
  return Math.sign(time(next.updateTime) - time(prev.updateTime));
}

/** Whether `next` is no older than `prev` (events may race a page read). */
const fresher = (next: Sandbox, prev: Sandbox): boolean => age(next, prev) >= 0;

function insertSorted(rows: Sandbox[], s: Sandbox): Sandbox[] {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(rows[mid], s)) lo = mid + 1;
    else hi = mid;
  }
  return [...rows.slice(0, lo), s, ...rows.slice(lo)];
}

/**
 * Applies one event to the rows: a sandbox that now matches the filter is
 * updated in place (or inserted in order), one that no longer does (or
 * was deleted) leaves. Returns the same array when nothing changed.
 *
 * `complete` says whether every page is loaded: when it is not, a new
 * sandbox older than the last row belongs to a page not read yet, and is
 * left for that page.
 */
export function applyEvent(rows: Sandbox[], ev: SandboxEvent, f: ListFilter, complete = true): Sandbox[] {
  const s = ev.sandbox;
  if (!s?.sandboxId) return rows;
  const i = rows.findIndex((r) => r.sandboxId === s.sandboxId);
  if (!matches(s, f)) return i < 0 ? rows : [...rows.slice(0, i), ...rows.slice(i + 1)];
  if (i >= 0) {
    if (!fresher(s, rows[i])) return rows;
    const next = rows.slice();
    next[i] = s;
    return next;
  }
  const last = rows[rows.length - 1];
  if (!complete && last && before(last, s)) return rows;
  return insertSorted(rows, s);
}

/** Adds a page, keeping what events already put there if it is newer; the result is in list order. */
export function mergePage(rows: Sandbox[], page: Sandbox[]): Sandbox[] {
  const index = new Map(rows.map((r, i) => [r.sandboxId, i]));
  const next = rows.slice();
  let changed = false;
  for (const s of page) {
    const i = index.get(s.sandboxId);
    if (i === undefined) {
      next.push(s);
      index.set(s.sandboxId, next.length - 1);
      changed = true;
    } else if (age(s, next[i]) > 0) {
      next[i] = s;
      changed = true;
    }
  }
  if (!changed) return rows;
  // Rows an event put in before the page came may sit out of order.
  return next.sort((a, b) => (a === b ? 0 : before(a, b) ? -1 : 1));
}

/** Counts by state, for the filter's options. */
export function countByState(rows: Sandbox[]): Partial<Record<SandboxState, number>> {
  const c: Partial<Record<SandboxState, number>> = {};
  for (const r of rows) {
    const s = r.state ?? "SANDBOX_STATE_UNSPECIFIED";
    c[s] = (c[s] ?? 0) + 1;
  }
  return c;
}

/** The filter as a page's query string (so a filtered list can be linked). */
export function filterToQuery(f: ListFilter): string {
  const q = new URLSearchParams();
  for (const s of f.states) q.append("state", s.replace(/^SANDBOX_STATE_/, "").toLowerCase());
  for (const [k, v] of Object.entries(f.labels)) q.append("label", `${k}=${v}`);
  for (const [k, v] of Object.entries(f.metadata)) q.append("metadata", `${k}=${v}`);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const STATES: SandboxState[] = [
  "SANDBOX_STATE_PENDING",
  "SANDBOX_STATE_STARTING",
  "SANDBOX_STATE_RUNNING",
  "SANDBOX_STATE_PAUSED",
  "SANDBOX_STATE_STOPPING",
  "SANDBOX_STATE_STOPPED",
  "SANDBOX_STATE_FAILED",
  "SANDBOX_STATE_DELETED",
];

/** A page's query string as a filter; unknown states and pairs without `=` are dropped. */
export function filterFromQuery(search: string): ListFilter {
  const q = new URLSearchParams(search);
  const pairs = (name: string): Record<string, string> => {
    const o: Record<string, string> = {};
    for (const p of q.getAll(name)) {
      const eq = p.indexOf("=");
      if (eq > 0) o[p.slice(0, eq)] = p.slice(eq + 1);
    }
    return o;
  };
  const states = q
    .getAll("state")
    .map((s) => `SANDBOX_STATE_${s.toUpperCase()}` as SandboxState)
    .filter((s) => STATES.includes(s));
  return { states: [...new Set(states)], labels: pairs("label"), metadata: pairs("metadata") };
}
