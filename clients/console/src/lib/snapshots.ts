/**
 * The snapshot, fork and preview forms' rules, as the server holds them
 * (names of 1 to 128 of `A-Za-z0-9._-`, 1 to 20 forks, ports 1 to 65535,
 * a link's lifetime up to a day), checked here so a mistake is named
 * beside its field before anything is sent.
 */

export const MAX_FORKS = 20;
/** A preview link's longest lifetime, in seconds (the server's limit). */
export const MAX_PREVIEW_TTL = 86_400;
/** The browser's DevTools port: never a preview. */
export const DEVTOOLS_PORT = 9222;

/** Why a snapshot name is refused (empty is fine: the server makes one). */
export function snapshotNameError(name: string): string | undefined {
  if (!name) return undefined;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(name)) return "A name is 1 to 128 letters, digits, '.', '_' or '-'";
  return undefined;
}

/** A whole number in bounds from a field, or why not. */
function whole(raw: string, what: string, min: number, max: number): number | string {
  const t = raw.trim();
  if (!/^\d+$/.test(t)) return `${what} must be a whole number`;
  const n = Number(t);
  if (n < min || n > max) return `${what} must be ${min.toLocaleString("en")} to ${max.toLocaleString("en")}`;
  return n;
}

export function forkCount(raw: string): number | string {
  return whole(raw, "The count", 1, MAX_FORKS);
}

export function previewPort(raw: string): number | string {
  const p = whole(raw, "The port", 1, 65_535);
  if (p === DEVTOOLS_PORT) return "Port 9222 is the browser's DevTools port, which is never a preview";
  return p;
}

/** A link's lifetime in seconds: undefined when empty (the server's default, an hour). */
export function previewTtl(raw: string): number | string | undefined {
  if (!raw.trim()) return undefined;
  return whole(raw, "The lifetime", 1, MAX_PREVIEW_TTL);
}

/** How long a snapshot froze its sandbox ("0.0125s"): milliseconds under a second. */
export function frozenLabel(d: string | undefined): string {
  const m = /^(\d+(?:\.\d+)?)s$/.exec(d ?? "");
  if (!m) return "—";
  const s = Number(m[1]);
  if (s === 0) return "not frozen";
  return s < 1 ? `${Math.max(1, Math.round(s * 1000))} ms` : `${+s.toFixed(1)} s`;
}

/** The words for each phase of a snapshot's copy (TakeSnapshot's `phase`). */
const PHASES: Record<string, string> = {
  copying: "Copying the files (the sandbox is frozen meanwhile)",
  publishing: "Hashing the copy (the sandbox runs again)",
  sharing: "Putting it on the shared storage",
  done: "Done",
};

/**
 * A snapshot's progress for people: its phase in words, the bytes copied
 * of about how many, and the fraction done (null when the total is
 * unknown). The total is the sandbox's disk in use, a little more than
 * the copy holds, so the fraction stops short of 1 until "done".
 */
export function snapshotStep(
  s: { phase?: string; bytesDone?: string | number; bytesTotal?: string | number },
  bytes: (n: number) => string,
): { label: string; fraction: number | null } {
  const phase = s.phase ?? "";
  const words = PHASES[phase] ?? (phase ? phase : "Starting");
  const done = Number(s.bytesDone ?? 0);
  const total = Number(s.bytesTotal ?? 0);
  if (phase === "done") return { label: `${words}: ${bytes(done)}`, fraction: 1 };
  if (!total) return { label: `${words}: ${bytes(done)}`, fraction: null };
  const fraction = Math.min(0.99, done / total);
  return { label: `${words}: ${bytes(done)} of about ${bytes(total)}`, fraction };
}
