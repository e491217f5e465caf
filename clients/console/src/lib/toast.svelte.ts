/**
 * Notifications: every error that is not shown beside its cause ends up
 * here, as a readable title and message (never a blank page).
 */
import { describe, isAbort } from "../api/errors";

export interface Toast {
  id: number;
  kind: "error" | "success" | "info";
  title: string;
  message: string;
}

export const toasts = $state<Toast[]>([]);
let next = 1;
const timers = new Map<number, ReturnType<typeof setTimeout>>();

export function dismiss(id: number): void {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
  clearTimeout(timers.get(id));
  timers.delete(id);
}

export function notify(t: Omit<Toast, "id">, ttlMs = t.kind === "error" ? 15_000 : 6_000): number {
  const id = next++;
  toasts.push({ ...t, id });
  if (toasts.length > 5) dismiss(toasts[0].id);
  timers.set(
    id,
    setTimeout(() => dismiss(id), ttlMs),
  );
  return id;
}

/**
 * Shows an error (an ApiError's title and message, or any thrown value);
 * the caller's own aborts and ended sessions (which go to sign-in) are
 * not shown.
 */
export function reportError(e: unknown, context?: string): void {
  if (isAbort(e)) return;
  const d = describe(e);
  if (d.code === "UNAUTHENTICATED") return;
  notify({ kind: "error", title: context ? `${context}: ${d.title}` : d.title, message: d.message });
}
