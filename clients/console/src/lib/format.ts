/** How values of the API are shown. */
import type { Sandbox, SandboxState } from "../api/sandboxes";

export function stateLabel(s: SandboxState | undefined): string {
  if (!s || s === "SANDBOX_STATE_UNSPECIFIED") return "Unknown";
  const w = s.replace(/^SANDBOX_STATE_/, "").toLowerCase();
  return w[0].toUpperCase() + w.slice(1);
}

/** The badge colour of a state. */
export function stateTone(s: SandboxState | undefined): "ok" | "warn" | "bad" | "busy" | "idle" {
  switch (s) {
    case "SANDBOX_STATE_RUNNING":
      return "ok";
    case "SANDBOX_STATE_PAUSED":
      return "warn";
    case "SANDBOX_STATE_FAILED":
      return "bad";
    case "SANDBOX_STATE_PENDING":
    case "SANDBOX_STATE_STARTING":
    case "SANDBOX_STATE_STOPPING":
      return "busy";
    default:
      return "idle";
  }
}

/** A proto Duration ("90s", "1.5s") in seconds. */
export function durationSeconds(d: string | undefined): number | undefined {
  if (!d) return undefined;
  const m = /^(-?\d+(?:\.\d+)?)s$/.exec(d);
  return m ? Number(m[1]) : undefined;
}

export function humanSeconds(total: number): string {
  if (total < 60) return `${+total.toFixed(1)} s`;
  const parts: string[] = [];
  let s = Math.round(total);
  for (const [unit, n] of [
    ["d", 86400],
    ["h", 3600],
    ["min", 60],
    ["s", 1],
  ] as const) {
    if (s >= n) {
      parts.push(`${Math.floor(s / n)} ${unit}`);
      s %= n;
    }
  }
  return parts.slice(0, 2).join(" ");
}

export function duration(d: string | undefined, unset = "—"): string {
  const s = durationSeconds(d);
  return s === undefined || s === 0 ? unset : humanSeconds(s);
}

export function dateTime(t: string | undefined): string {
  if (!t) return "—";
  const d = new Date(t);
  if (Number.isNaN(d.getTime()) || d.getTime() <= 0) return "—";
  return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

export function ago(t: string | undefined, now = Date.now()): string {
  if (!t) return "—";
  const ms = now - Date.parse(t);
  if (!Number.isFinite(ms)) return "—";
  const s = Math.round(Math.abs(ms) / 1000);
  const v = s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : s < 86400 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 86400)} d`;
  return ms >= 0 ? `${v} ago` : `in ${v}`;
}

export function mib(v: string | undefined): string {
  const n = Number(v ?? 0);
  if (!n) return "default";
  return n >= 1024 && n % 1024 === 0 ? `${n / 1024} GiB` : `${n} MiB`;
}

export function cpu(v: string | undefined): string {
  const n = Number(v ?? 0);
  if (!n) return "default";
  return `${+(n / 1000).toFixed(3)} CPU`;
}

export function resourcesSummary(s: Sandbox): string {
  const r = s.resources ?? {};
  return `${cpu(r.cpuMillis)} · ${mib(r.memoryMib)}`;
}

export function enumLabel(v: string | undefined, prefix: string): string {
  if (!v || v.endsWith("_UNSPECIFIED")) return "default";
  return v.replace(prefix, "").toLowerCase().replace(/_/g, " ");
}
