/**
 * The console's pages by path (below the base, `/console`). Pure, so the
 * table is tested without a browser; router.svelte.ts follows the
 * address bar.
 */

export type SandboxTab = "overview" | "run" | "terminal";

export type Route =
  | { name: "home" }
  | { name: "signIn" }
  | { name: "me" }
  | { name: "sandboxes" }
  | { name: "sandbox"; id: string; tab: SandboxTab }
  | { name: "notFound"; path: string };

const SANDBOX = /^\/sandboxes\/([^/]+)(?:\/(run|terminal))?\/?$/;

/** The route of a path below the base (`/`, `/sandboxes/sbx_…/run`…). */
export function matchRoute(path: string): Route {
  const p = path === "" ? "/" : path;
  switch (p.replace(/(.)\/$/, "$1")) {
    case "/":
      return { name: "home" };
    case "/sign-in":
      return { name: "signIn" };
    case "/me":
      return { name: "me" };
    case "/sandboxes":
      return { name: "sandboxes" };
  }
  const m = SANDBOX.exec(p);
  if (m) {
    let id: string;
    try {
      id = decodeURIComponent(m[1]);
    } catch {
      return { name: "notFound", path: p };
    }
    return { name: "sandbox", id, tab: (m[2] as SandboxTab | undefined) ?? "overview" };
  }
  return { name: "notFound", path: p };
}

/** The path below the base of a full pathname, or null outside the base. */
export function stripBase(pathname: string, base: string): string | null {
  const b = base.replace(/\/$/, "");
  if (pathname === b) return "/";
  if (!pathname.startsWith(`${b}/`)) return null;
  return pathname.slice(b.length);
}

/** A page's path for a sandbox tab. */
export function sandboxPath(id: string, tab: SandboxTab = "overview"): string {
  return `/sandboxes/${encodeURIComponent(id)}${tab === "overview" ? "" : `/${tab}`}`;
}
