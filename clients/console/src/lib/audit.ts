/**
 * The audit page's filters and paging, kept apart from the page: the
 * filters live in the address (so a filtered log can be linked and
 * survives a reload), times as RFC 3339 there and as the person's local
 * time in the inputs; earlier page tokens are remembered for "Previous".
 */
import type { AuditQuery } from "../api/admin";

export interface AuditFilter {
  tenant: string;
  actor: string;
  method: string;
  resource: string;
  /** RFC 3339 (UTC), or empty. */
  from: string;
  to: string;
}

const KEYS: (keyof AuditFilter)[] = ["tenant", "actor", "method", "resource", "from", "to"];

export const emptyAuditFilter = (): AuditFilter => ({ tenant: "", actor: "", method: "", resource: "", from: "", to: "" });

/** The filter in a query string (`?method=…&from=…`); unknown or bad values are dropped. */
export function auditFilterFromQuery(search: string): AuditFilter {
  const p = new URLSearchParams(search);
  const f = emptyAuditFilter();
  for (const k of KEYS) f[k] = (p.get(k) ?? "").trim();
  for (const k of ["from", "to"] as const) {
    if (f[k] && Number.isNaN(Date.parse(f[k]))) f[k] = "";
  }
  return f;
}

/** The query string of a filter ("" when nothing is set), in a fixed order. */
export function auditFilterToQuery(f: AuditFilter): string {
  const p = new URLSearchParams();
  for (const k of KEYS) if (f[k].trim()) p.set(k, f[k].trim());
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** What ListAuditEvents is asked; the tenant only when it may be chosen (platform admins). */
export function auditQuery(f: AuditFilter, tenantChoosable: boolean): AuditQuery {
  return {
    tenantId: tenantChoosable ? f.tenant : "",
    actorId: f.actor,
    method: f.method,
    resourceId: f.resource,
    startTime: f.from,
    endTime: f.to,
  };
}

const pad = (n: number) => String(n).padStart(2, "0");

/** An RFC 3339 time as a `datetime-local` input's value, in the local time zone. */
export function toLocalInput(iso: string): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (local time) as RFC 3339 in UTC; "" when empty or bad. */
export function fromLocalInput(local: string): string {
  if (!local) return "";
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

/** Whether the range is backwards (both set, `to` not after `from`). */
export function rangeError(f: AuditFilter): string {
  if (f.from && f.to && Date.parse(f.to) <= Date.parse(f.from)) return "“Until” must be after “From”.";
  return "";
}

/**
 * Paging: the tokens of the pages before this one ("" for the first), so
 * "Previous" goes back without the server keeping anything.
 */
export interface Pager {
  /** Tokens of the earlier pages, oldest first. */
  back: string[];
  /** This page's token ("" on the first). */
  current: string;
}

export const firstPage = (): Pager => ({ back: [], current: "" });

export function nextPage(p: Pager, next: string): Pager {
  return next ? { back: [...p.back, p.current], current: next } : p;
}

export function previousPage(p: Pager): Pager {
  if (!p.back.length) return p;
  return { back: p.back.slice(0, -1), current: p.back[p.back.length - 1] };
}

/** Methods worth offering in the filter (the full gRPC names the log keeps). */
export const KNOWN_METHODS = [
  "/talon.v1.AdminService/DrainWorker",
  "/talon.v1.AdminService/ReassignSandbox",
  "/talon.v1.TenantService/CreateTenant",
  "/talon.v1.TenantService/UpdateTenantQuota",
  "/talon.v1.TenantService/CreateUser",
  "/talon.v1.TenantService/UpdateUser",
  "/talon.v1.TenantService/DeleteUser",
  "/talon.v1.TenantService/CreateApiKey",
  "/talon.v1.TenantService/DeleteApiKey",
  "/talon.v1.SandboxService/CreateSandbox",
  "/talon.v1.SandboxService/DeleteSandbox",
  "/talon.v1.SandboxService/StopSandbox",
  "/talon.v1.SandboxService/StartSandbox",
  "/talon.v1.ProcessService/StartProcess",
  "autopilot.WorkerLost",
  "autopilot.WorkerBack",
  "autopilot.MoveLostWorker",
  "autopilot.MoveSandbox",
  "autopilot.RestartFenced",
  "autopilot.NoCapacity",
];

/**
 * The audit methods that are moves and failover (server/src/domain/
 * autopilot.rs audits each; a move by hand is ReassignSandbox). There is
 * no failover-history API: the workers page reads these from the log.
 */
export const MOVE_METHODS = [
  "/talon.v1.AdminService/ReassignSandbox",
  "autopilot.MoveSandbox",
  "autopilot.MoveLostWorker",
  "autopilot.WorkerLost",
  "autopilot.WorkerBack",
  "autopilot.RestartFenced",
];

/** Whether a record is a move or failover that happened or was tried (not a caller the server refused outright). */
export function isMoveRecord(e: { method?: string; outcome?: string }): boolean {
  return MOVE_METHODS.includes(e.method ?? "") && e.outcome !== "PERMISSION_DENIED" && e.outcome !== "UNAUTHENTICATED";
}

/** "/talon.v1.AdminService/DrainWorker" → "AdminService.DrainWorker". */
export function methodLabel(m: string | undefined): string {
  if (!m) return "—";
  const x = /^\/talon\.[a-z0-9]+\.([A-Za-z]+)\/([A-Za-z]+)$/.exec(m);
  return x ? `${x[1]}.${x[2]}` : m;
}

/** Newest first by id, without repeats (merging several filtered reads). */
export function mergeNewest<T extends { auditEventId?: string }>(lists: T[][], limit: number): T[] {
  const seen = new Set<string>();
  const all: T[] = [];
  for (const e of lists.flat()) {
    const id = e.auditEventId ?? "";
    if (seen.has(id)) continue;
    seen.add(id);
    all.push(e);
  }
  all.sort((a, b) => Number(b.auditEventId ?? 0) - Number(a.auditEventId ?? 0));
  return all.slice(0, limit);
}
