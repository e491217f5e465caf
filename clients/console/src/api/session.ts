/**
 * The browser session: sign in (the gateway sets the HttpOnly
 * `__Host-talon-session` cookie and answers the CSRF token, which is kept
 * in this tab's sessionStorage), who am I, and sign out.
 */
import type { Api } from "./client";
import { ApiError } from "./errors";
import type { WhoAmI } from "./sandboxes";

export async function signIn(api: Api, email: string, password: string): Promise<void> {
  const r = await api.call(api.client.POST("/v1/auth/browser-session", { body: { email, password } }));
  if (!r.csrfToken) throw new Error("the gateway started a session without a CSRF token");
  api.csrf.set(r.csrfToken);
}

/**
 * Ends the session. The token is forgotten once the gateway cleared the
 * cookie (or the session had already ended: 401); on any other failure
 * the session lives on, and so does the token a retry needs.
 */
export async function signOut(api: Api): Promise<void> {
  try {
    await api.call(api.client.DELETE("/v1/auth/browser-session"));
  } catch (e) {
    if (!(e instanceof ApiError && e.code === "UNAUTHENTICATED")) throw e;
  }
  api.csrf.set(null);
}

export async function whoAmI(api: Api): Promise<WhoAmI> {
  return api.call(api.client.GET("/v1/auth/me"));
}

/** Roles by rank; an unknown role ranks as a viewer. */
const RANK: Record<string, number> = { ROLE_VIEWER: 1, ROLE_DEVELOPER: 2, ROLE_OWNER: 3 };

export function roleRank(role: string | undefined): number {
  return RANK[role ?? ""] ?? 1;
}

/** A developer or owner may change sandboxes; a viewer may only look. */
export function canMutate(me: WhoAmI | null | undefined): boolean {
  return !!me && roleRank(me.role) >= RANK.ROLE_DEVELOPER;
}

export function roleName(role: string | undefined): string {
  switch (role) {
    case "ROLE_OWNER":
      return "Owner";
    case "ROLE_DEVELOPER":
      return "Developer";
    case "ROLE_VIEWER":
      return "Viewer";
    default:
      return "Unknown role";
  }
}

/**
 * Changes the signed-in user's password. Every session of the old one
 * ends at once, this one too: the caller signs in again with the new one.
 */
export async function changePassword(api: Api, currentPassword: string, newPassword: string): Promise<void> {
  await api.call(api.client.POST("/v1/auth/password", { body: { currentPassword, newPassword } }));
}
