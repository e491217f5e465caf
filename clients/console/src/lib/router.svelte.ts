/**
 * Path-based routing under the base (`/console/`) with the History API:
 * the address bar is the state. Clicks on links inside the base are
 * handled here (no reload); everything else is left to the browser.
 */
import { type Route, matchRoute, stripBase } from "./routes";

export const BASE = import.meta.env.BASE_URL.replace(/\/$/, "");

export const location = $state<{ path: string; search: string; route: Route }>({
  path: "/",
  search: "",
  route: { name: "home" },
});

function read() {
  const path = stripBase(window.location.pathname, BASE) ?? "/";
  location.path = path;
  location.search = window.location.search;
  location.route = matchRoute(path);
}

/** The full href of a console path (`/sandboxes` → `/console/sandboxes`). */
export function href(path: string): string {
  return BASE + (path.startsWith("/") ? path : `/${path}`);
}

export function navigate(path: string, o: { replace?: boolean } = {}): void {
  const url = href(path);
  if (url === window.location.pathname + window.location.search) return;
  if (o.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  read();
  if (!o.replace) window.scrollTo(0, 0);
}

/** Follows the address bar; returns the cleanup. */
export function startRouter(): () => void {
  read();
  const onPop = () => read();
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.("a");
    if (!a || a.target || a.hasAttribute("download") || a.origin !== window.location.origin) return;
    const path = stripBase(a.pathname, BASE);
    if (path === null) return;
    e.preventDefault();
    navigate(path + a.search);
  };
  window.addEventListener("popstate", onPop);
  document.addEventListener("click", onClick);
  return () => {
    window.removeEventListener("popstate", onPop);
    document.removeEventListener("click", onClick);
  };
}
