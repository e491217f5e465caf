/**
 * The file browser's pure logic: paths inside the sandbox, the names a
 * person may give, the tree's visible rows (directories load lazily, so
 * the rows are built from what has been listed so far), and whether a
 * file can be shown as text (small enough, valid UTF-8, no NUL).
 */
import type { Schemas } from "../api/client";

export type FileEntry = Schemas["FileInfo"];

/** The tree's root: where relative paths of the file API land. */
export const WORKSPACE = "/workspace";
/** The largest file the viewer shows (and edits); bigger ones are only downloaded. */
export const MAX_VIEW_BYTES = 1024 * 1024;

export const isDir = (e: FileEntry | null | undefined): boolean => e?.type === "FILE_TYPE_DIRECTORY";

export function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name}`;
}

/** The directory a path is in (`/` for a top-level path). */
export function parentOf(path: string): string {
  const p = path.replace(/\/+$/, "");
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

export function baseName(path: string): string {
  const p = path.replace(/\/+$/, "");
  return p.slice(p.lastIndexOf("/") + 1);
}

/** Why a new file or directory name is refused, or undefined when it is fine. */
export function nameError(name: string): string | undefined {
  if (!name) return "Enter a name.";
  if (name === "." || name === "..") return "A name cannot be . or ..";
  if (name.includes("/")) return "A name cannot hold a /";
  if (name.includes("\0")) return "A name cannot hold a NUL character";
  if (new TextEncoder().encode(name).length > 255) return "A name is at most 255 bytes";
  return undefined;
}

/** Directories first, then by name. */
export function sortEntries(entries: FileEntry[]): FileEntry[] {
  return [...entries].sort((a, b) => {
    const d = Number(isDir(b)) - Number(isDir(a));
    if (d) return d;
    const x = a.name ?? "";
    const y = b.name ?? "";
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

export interface TreeRow {
  entry: FileEntry;
  /** 1 for the root's entries. */
  depth: number;
  path: string;
}

/**
 * The rows the tree shows: the root's entries, and under each open
 * directory whose listing is known, its entries, depth first.
 */
export function visibleRows(root: string, listed: ReadonlyMap<string, FileEntry[]>, open: ReadonlySet<string>): TreeRow[] {
  const rows: TreeRow[] = [];
  const walk = (dir: string, depth: number, seen: Set<string>) => {
    if (seen.has(dir) || depth > 64) return;
    seen.add(dir);
    for (const entry of listed.get(dir) ?? []) {
      const path = entry.path || joinPath(dir, entry.name ?? "");
      rows.push({ entry, depth, path });
      if (isDir(entry) && open.has(path)) walk(path, depth + 1, seen);
    }
  };
  walk(root, 1, new Set());
  return rows;
}

/** The directory an upload or a new folder goes into, given what is selected. */
export function targetDir(selected: FileEntry | null, root: string): string {
  if (!selected?.path) return root;
  return isDir(selected) ? selected.path : parentOf(selected.path);
}

/** Why a file is not shown as text before reading it (its kind or size), if it is not. */
export function notViewable(e: FileEntry): string | undefined {
  if (e.type === "FILE_TYPE_SYMLINK") return `A symbolic link to ${e.symlinkTarget || "somewhere"}.`;
  if (e.type !== "FILE_TYPE_FILE") return "Not a regular file.";
  const size = Number(e.size ?? 0);
  if (size > MAX_VIEW_BYTES) return `Too large to show here (${humanBytes(size)}; the viewer shows up to ${humanBytes(MAX_VIEW_BYTES)}). Download it instead.`;
  return undefined;
}

/** The text of a file's bytes, or null when they are not text (a NUL, or not UTF-8). */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

export function humanBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "—";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${+v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** Permission bits as `rwxr-xr-x`. */
export function modeString(mode: number | undefined): string {
  const m = mode ?? 0;
  let s = "";
  for (let shift = 6; shift >= 0; shift -= 3) {
    const b = (m >> shift) & 7;
    s += (b & 4 ? "r" : "-") + (b & 2 ? "w" : "-") + (b & 1 ? "x" : "-");
  }
  return s;
}

/** An upload's progress as a whole percentage (0 when the total is unknown). */
export function percent(loaded: number, total: number): number {
  if (!total || total <= 0) return 0;
  return Math.max(0, Math.min(100, Math.floor((loaded / total) * 100)));
}
