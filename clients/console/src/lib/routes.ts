/**
 * The console's pages by path (below the base, `/console`). Pure, so the
 * table is tested without a browser; router.svelte.ts follows the
 * address bar.
 */

export type SandboxTab = "overview" | "run" | "terminal" | "processes" | "code" | "files" | "previews" | "snapshots" | "network" | "agents" | "browser";

export type Route =
  | { name: "home" }
  | { name: "signIn" }
  | { name: "me" }
  | { name: "sandboxes" }
  | { name: "secrets" }
  | { name: "volumes" }
  | { name: "images" }
  | { name: "sandbox"; id: string; tab: SandboxTab }
  | OwnerAdminRoute
  | { name: "notFound"; path: string };

const SANDBOX = /^\/sandboxes\/([^/]+)(?:\/(run|terminal|processes|code|files|previews|snapshots|network|agents|browser))?\/?$/;

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
    case "/secrets":
      return { name: "secrets" };
    case "/volumes":
      return { name: "volumes" };
    case "/images":
      return { name: "images" };
  }
  const oa = matchOwnerAdmin(p);
  if (oa) return oa;
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

// The owner and platform-admin pages (src/pages/owner, src/pages/admin).
export type TenantSection = "users" | "quota" | "audit";
export type AdminSection = "workers" | "tenants" | "audit" | "metrics";
export type OwnerAdminRoute =
  | { name: "keys" }
  | { name: "tenant"; section: TenantSection }
  | { name: "admin"; section: AdminSection }
  | { name: "adminTenant"; id: string };

const OWNER_ADMIN = /^\/(keys|tenant|admin)(?:\/(users|quota|audit|workers|tenants|metrics)(?:\/([^/]+))?)?\/?$/;

/** `/keys`, `/tenant[/users|quota|audit]`, `/admin[/workers|tenants|audit|metrics]`, `/admin/tenants/{id}`; else null. */
export function matchOwnerAdmin(p: string): OwnerAdminRoute | { name: "notFound"; path: string } | null {
  const m = OWNER_ADMIN.exec(p);
  if (!m) return null;
  const [, area, section, id] = m;
  const notFound = { name: "notFound" as const, path: p };
  if (area === "keys") return section ? notFound : { name: "keys" };
  if (area === "tenant") {
    if (id || !(section === undefined || section === "users" || section === "quota" || section === "audit")) return notFound;
    return { name: "tenant", section: (section as TenantSection | undefined) ?? "users" };
  }
  if (id !== undefined) {
    if (section !== "tenants") return notFound;
    try {
      return { name: "adminTenant", id: decodeURIComponent(id) };
    } catch {
      return notFound;
    }
  }
  if (!(section === undefined || section === "workers" || section === "tenants" || section === "audit" || section === "metrics"))
    return notFound;
  return { name: "admin", section: (section as AdminSection | undefined) ?? "workers" };
}
