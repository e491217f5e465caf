/**
 * The console's shared state: the one API client, the signed-in person
 * (who am I), and what their role lets the UI offer.
 */
import { Api, memoryTokens, storageTokens } from "../api/client";
import { ApiError, describe } from "../api/errors";
import type { WhoAmI } from "../api/sandboxes";
import { canMutate, signIn as apiSignIn, signOut as apiSignOut, whoAmI } from "../api/session";
import { location, navigate } from "./router.svelte";

export const session = $state<{
  me: WhoAmI | null;
  /** Who am I has been asked once (the first page waits for it). */
  checked: boolean;
  /** The last request found the session ended. */
  expired: boolean;
  /** This tab holds the CSRF token state-changing calls need. */
  hasToken: boolean;
  /** Who am I failed for another reason than an ended session (the gateway is down…). */
  failed: { title: string; message: string } | null;
}>({ me: null, checked: false, expired: false, hasToken: false, failed: null });

function tokenStore() {
  try {
    return storageTokens(window.sessionStorage);
  } catch {
    return memoryTokens();
  }
}

export const api = new Api({
  baseUrl: window.location.origin,
  csrf: tokenStore(),
  onUnauthenticated: () => {
    // The old token stays until the next sign-in replaces it (the gateway
    // ignores a session cookie that comes with a sign-in).
    const wasSignedIn = session.me !== null;
    session.me = null;
    session.expired = wasSignedIn;
    if (location.route.name !== "signIn") {
      const next = location.path + location.search;
      navigate(`/sign-in?next=${encodeURIComponent(next)}`, { replace: true });
    }
  },
  // Another tab signed in again: this tab's token is of the old session.
  // Its controls go, and the banner says to sign in again here.
  onStaleToken: () => {
    session.hasToken = false;
  },
});
session.hasToken = api.csrf.get() !== null;

/**
 * Asks who the session is: null when there is none; when the answer is
 * another failure, `session.failed` says what it was.
 */
export async function refreshMe(): Promise<WhoAmI | null> {
  try {
    session.me = await whoAmI(api);
    session.expired = false;
    session.failed = null;
  } catch (e) {
    session.me = null;
    session.failed = e instanceof ApiError && e.code === "UNAUTHENTICATED" ? null : describe(e);
  } finally {
    session.checked = true;
  }
  return session.me;
}

export async function signIn(email: string, password: string): Promise<void> {
  await apiSignIn(api, email, password);
  session.hasToken = true;
  await refreshMe();
}

/**
 * Signs out. When the gateway refuses (this tab's token is not the
 * session's, or the gateway cannot be reached) the session lives on: the
 * page stays, and the error is thrown for the caller to show.
 */
export async function signOut(): Promise<void> {
  await apiSignOut(api);
  session.hasToken = false;
  session.me = null;
  session.expired = false;
  navigate("/sign-in", { replace: true });
}

/** Whether to offer controls that change things (a viewer gets none). */
export function mayMutate(): boolean {
  return canMutate(session.me) && session.hasToken;
}
