/**
 * Pure logic of the workers page and the move dialog: what a worker has
 * left (capacity minus what the server placed on it), how full a bar is,
 * which workers may take a sandbox, and how states read. Kept apart from
 * the page so the rules are tested without a browser.
 */
import type { Capacity, Worker, WorkerState } from "../api/admin";

/** A 64-bit count of the API (a string in JSON) as a number; 0 when unset. */
export function num(v: string | number | undefined | null): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
}

export interface Amount {
  cpuMillis: number;
  memoryMib: number;
  sandboxes: number;
}

export function amount(c: Capacity | undefined): Amount {
  return { cpuMillis: num(c?.cpuMillis), memoryMib: num(c?.memoryMib), sandboxes: num(c?.sandboxes) };
}

/** What a worker can still take (never below zero). */
export function free(w: Worker): Amount {
  const cap = amount(w.capacity);
  const used = amount(w.allocated);
  return {
    cpuMillis: Math.max(0, cap.cpuMillis - used.cpuMillis),
    memoryMib: Math.max(0, cap.memoryMib - used.memoryMib),
    sandboxes: Math.max(0, cap.sandboxes - used.sandboxes),
  };
}

/**
 * How full a bar is: used over total, between 0 and 1 (1 when over, or
 * when something is used of nothing; 0 for nothing of nothing).
 */
export function share(used: number, total: number): number {
  if (total <= 0) return used > 0 ? 1 : 0;
  return Math.min(1, Math.max(0, used / total));
}

/** "1.5 / 4 CPU", "512 MiB / 8 GiB", "3 / 500". */
export function usedOf(kind: keyof Amount, used: number, total: number): string {
  if (kind === "cpuMillis") return `${+(used / 1000).toFixed(2)} / ${+(total / 1000).toFixed(2)} CPU`;
  if (kind === "memoryMib") return `${mibText(used)} / ${mibText(total)}`;
  return `${used} / ${total}`;
}

export function mibText(n: number): string {
  return n >= 1024 ? `${+(n / 1024).toFixed(1)} GiB` : `${n} MiB`;
}

export const WORKER_STATES: Record<WorkerState, { label: string; tone: "ok" | "warn" | "bad" | "idle" }> = {
  WORKER_STATE_UNSPECIFIED: { label: "Unknown", tone: "idle" },
  WORKER_STATE_ACTIVE: { label: "Active", tone: "ok" },
  WORKER_STATE_DRAINING: { label: "Draining", tone: "warn" },
  WORKER_STATE_OFFLINE: { label: "Offline", tone: "idle" },
  WORKER_STATE_LOST: { label: "Lost", tone: "bad" },
};

export function workerState(s: WorkerState | undefined) {
  return WORKER_STATES[s ?? "WORKER_STATE_UNSPECIFIED"] ?? WORKER_STATES.WORKER_STATE_UNSPECIFIED;
}

/** Why a sandbox moved, in words (SandboxMove.cause). */
export function moveCause(c: string | undefined): string {
  switch (c) {
    case "SANDBOX_MOVE_CAUSE_REASSIGNED":
      return "Moved by hand";
    case "SANDBOX_MOVE_CAUSE_WORKER_LOST":
      return "Worker lost";
    case "SANDBOX_MOVE_CAUSE_NOT_HELD":
      return "Worker no longer held it";
    case "SANDBOX_MOVE_CAUSE_FENCED":
      return "Fenced, started again";
    default:
      return c ? c : "Not recorded";
  }
}

export function failoverScope(s: Worker["failoverScope"]): string {
  switch (s) {
    case "FAILOVER_SCOPE_NONE":
      return "None";
    case "FAILOVER_SCOPE_MOVABLE":
      return "Movable";
    case "FAILOVER_SCOPE_SHARED":
      return "Shared";
    default:
      return "Not reported";
  }
}

/** What the failover scopes mean (admin.proto, FailoverScope). */
export const FAILOVER_HELP =
  "Failover scope: which of a worker's sandboxes would move were it lost now. None: no other live worker could take them. Movable: those set to move (worker_loss_action MOVE), with an empty workspace. Shared: those, and every sandbox on shared storage, with its files.";

/** What a sandbox needs on its new worker (unknown parts count as zero). */
export interface Need {
  cpuMillis: number;
  memoryMib: number;
}

export interface Choice {
  worker: Worker;
  /** Empty when it may take the sandbox; else why not. */
  reason: string;
}

/**
 * Each worker, with why it cannot take the sandbox (empty when it can):
 * it must be ACTIVE (connected, not draining, not lost), not the one that
 * holds the sandbox now, and have room for one more sandbox of `need`.
 * The server checks again (and also that it holds the image and offers
 * the isolation level, which ListWorkers does not say).
 */
export function moveChoices(workers: Worker[], current: string | undefined, need: Need): Choice[] {
  return workers.map((w) => {
    const f = free(w);
    let reason = "";
    if (w.workerId && w.workerId === current) reason = "holds it now";
    else if (w.state !== "WORKER_STATE_ACTIVE") reason = `${workerState(w.state).label.toLowerCase()}, not active`;
    else if (f.sandboxes < 1) reason = "no room for another sandbox";
    else if (f.cpuMillis < need.cpuMillis) reason = "not enough cpu left";
    else if (f.memoryMib < need.memoryMib) reason = "not enough memory left";
    return { worker: w, reason };
  });
}

export function eligibleWorkers(workers: Worker[], current: string | undefined, need: Need): Worker[] {
  return moveChoices(workers, current, need)
    .filter((c) => !c.reason)
    .map((c) => c.worker);
}

const ORDER: Record<string, number> = {
  WORKER_STATE_ACTIVE: 0,
  WORKER_STATE_DRAINING: 1,
  WORKER_STATE_LOST: 2,
  WORKER_STATE_OFFLINE: 3,
};

/** Live workers first (active, draining), then lost, then offline; by host name and id within each. */
export function sortWorkers(ws: Worker[]): Worker[] {
  return [...ws].sort(
    (a, b) =>
      (ORDER[a.state ?? ""] ?? 4) - (ORDER[b.state ?? ""] ?? 4) ||
      (a.hostname ?? "").localeCompare(b.hostname ?? "") ||
      (a.workerId ?? "").localeCompare(b.workerId ?? ""),
  );
}
