/**
 * Light, dark, or the system's choice (prefers-color-scheme), kept in
 * localStorage. tokens.css reads `data-theme` on the root element.
 */
export type ThemeChoice = "system" | "light" | "dark";

const KEY = "talon.theme";
export const THEME_EVENT = "talon-theme";

export function loadTheme(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === "light" || v === "dark" ? v : "system";
  } catch {
    return "system";
  }
}

export function applyTheme(choice: ThemeChoice, persist = true): void {
  const root = document.documentElement;
  if (choice === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", choice);
  if (persist) {
    try {
      if (choice === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, choice);
    } catch {
      /* not kept: fine */
    }
  }
  window.dispatchEvent(new CustomEvent(THEME_EVENT));
}

/** The order the toggle goes through. */
export function nextTheme(c: ThemeChoice): ThemeChoice {
  return c === "system" ? "light" : c === "light" ? "dark" : "system";
}
