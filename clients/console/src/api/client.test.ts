import { describe as suite, expect, it, vi } from "vitest";
import { Api, CSRF_HEADER, memoryTokens, storageTokens } from "./client";
import { ApiError, describe, errorFromBody, errorFromResponse } from "./errors";
import { listSandboxes, runAction } from "./sandboxes";
import { canMutate, signIn, signOut, whoAmI } from "./session";

const BASE = "http://talon.test";
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** An Api over a mocked fetch that records every request. */
function setup(answer: (req: Request) => Response | Promise<Response>, token: string | null = "tok-1") {
  const seen: Request[] = [];
  const onUnauthenticated = vi.fn();
  const fetch = vi.fn(async (req: Request) => {
    seen.push(req);
    return answer(req);
  });
  const api = new Api({ baseUrl: BASE, csrf: memoryTokens(token), fetch, onUnauthenticated });
  return { api, seen, onUnauthenticated, fetch };
}

suite("error mapping", () => {
  it("reads a gateway error body with a numeric gRPC code", () => {
    const e = errorFromBody(400, { code: 9, message: "sandbox sbx_1 is paused", details: [{ "@type": "x" }] }, "req-7");
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("FAILED_PRECONDITION");
    expect(e.message).toBe("sandbox sbx_1 is paused");
    expect(e.title).toBe("Not possible in its current state");
    expect(e.status).toBe(400);
    expect(e.details).toHaveLength(1);
    expect(e.requestId).toBe("req-7");
  });

  it("accepts a code given by name", () => {
    expect(errorFromBody(404, { code: "NOT_FOUND", message: "no such sandbox" }).code).toBe("NOT_FOUND");
  });

  it("falls back to the HTTP status and strips a proxy's HTML", () => {
    const e = errorFromBody(502, "<html><body><h1>502 Bad Gateway</h1></body></html>");
    expect(e.code).toBe("UNAVAILABLE");
    expect(e.message).toBe("HTTP 502: 502 Bad Gateway");
    expect(errorFromBody(418, "").code).toBe("UNKNOWN");
    expect(errorFromBody(500, "").message).toBe("HTTP 500 from the gateway.");
  });

  it("never leaves the message blank", () => {
    expect(errorFromBody(403, { code: 7, message: "" }).message).toBe("Your role does not allow this.");
    expect(errorFromBody(409, { code: 10 }).message).toBe("A conflicting change happened");
  });

  it("reads a failed response's body", async () => {
    const e = await errorFromResponse(json(429, { code: 8, message: "quota: 10 sandboxes" }, { "x-request-id": "r1" }));
    expect([e.code, e.message, e.requestId]).toEqual(["RESOURCE_EXHAUSTED", "quota: 10 sandboxes", "r1"]);
    const t = await errorFromResponse(new Response("upstream timed out", { status: 504 }));
    expect([t.code, t.message]).toEqual(["DEADLINE_EXCEEDED", "HTTP 504: upstream timed out"]);
  });

  it("describes anything thrown", () => {
    expect(describe(new ApiError("NOT_FOUND", "gone"))).toEqual({ title: "Not found", message: "gone", code: "NOT_FOUND" });
    expect(describe(new TypeError("x is undefined")).message).toBe("x is undefined");
    expect(describe(undefined).message).toBe("An unexpected error happened.");
    expect(describe(new DOMException("aborted", "AbortError")).title).toBe("Cancelled");
  });
});

suite("the client", () => {
  it("sends the CSRF token on every state-changing request, not on reads", async () => {
    const { api, seen } = setup(() => json(200, {}));
    await api.call(api.client.GET("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId: "sbx_a" } } }));
    await runAction(api, "sbx_a", "pause");
    await runAction(api, "sbx_a", "delete");
    await api.call(api.client.PATCH("/v1/sandboxes/{sandboxId}/network-policy", { params: { path: { sandboxId: "sbx_a" } }, body: {} }));
    await api.fetch("/v1/sandboxes/sbx_a/processes", { method: "POST", body: "{}" });
    expect(seen.map((r) => [r.method, r.headers.get(CSRF_HEADER)])).toEqual([
      ["GET", null],
      ["POST", "tok-1"],
      ["DELETE", "tok-1"],
      ["PATCH", "tok-1"],
      ["POST", "tok-1"],
    ]);
    expect(seen[1].url).toBe(`${BASE}/v1/sandboxes/sbx_a:pause`);
    expect(seen.every((r) => r.credentials === "same-origin")).toBe(true);
  });

  it("sends no token when it holds none", async () => {
    const { api, seen } = setup(() => json(200, {}), null);
    await runAction(api, "sbx_a", "stop");
    expect(seen[0].headers.has(CSRF_HEADER)).toBe(false);
  });

  it("turns an error answer into a typed error", async () => {
    const { api } = setup(() => json(400, { code: 3, message: "resources.cpu_millis is above the maximum of 8000" }));
    const err = await runAction(api, "sbx_a", "start").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("INVALID_ARGUMENT");
    expect((err as ApiError).message).toContain("maximum of 8000");
  });

  it("reports a 401 so the app sends the person to sign in", async () => {
    const { api, onUnauthenticated } = setup(() => json(401, { code: 16, message: "session expired" }));
    const err = await whoAmI(api).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe("UNAUTHENTICATED");
    expect(onUnauthenticated).toHaveBeenCalledTimes(1);
    expect(onUnauthenticated.mock.calls[0][0].message).toBe("session expired");
    // Streams too.
    await api.fetch("/v1/sandbox-events").catch(() => {});
    expect(onUnauthenticated).toHaveBeenCalledTimes(2);
  });

  it("does not treat a wrong password as an ended session", async () => {
    const { api, onUnauthenticated } = setup(() => json(401, { code: 16, message: "wrong email or password" }));
    const err = await signIn(api, "a@b.c", "nope").catch((e: unknown) => e);
    expect((err as ApiError).message).toBe("wrong email or password");
    expect(onUnauthenticated).not.toHaveBeenCalled();
  });

  it("says so when the gateway cannot be reached", async () => {
    const { api } = setup(() => {
      throw new TypeError("fetch failed");
    });
    const err = await whoAmI(api).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe("UNAVAILABLE");
    expect((err as ApiError).message).toContain("Cannot reach the gateway");
  });

  it("lets the caller's abort through as an abort", async () => {
    const { api } = setup(() => {
      throw new DOMException("aborted", "AbortError");
    });
    const err = await api.fetch("/v1/sandbox-events").catch((e: unknown) => e);
    expect((err as Error).name).toBe("AbortError");
  });

  it("keeps the session's CSRF token from sign-in, and after a sign-out that failed", async () => {
    const { api, seen } = setup((req) =>
      req.method === "POST"
        ? json(200, { sessionToken: "", csrfToken: "csrf-2", expiresAt: "2030-01-01T00:00:00Z" })
        : json(503, { code: 14, message: "down" }),
    null);
    await signIn(api, "dev@example.com", "pw");
    expect(api.csrf.get()).toBe("csrf-2");
    expect(await seen[0].json()).toEqual({ email: "dev@example.com", password: "pw" });
    // A failed sign-out leaves the session, and the token a retry needs.
    await expect(signOut(api)).rejects.toThrow("down");
    expect(seen[1].method).toBe("DELETE");
    expect(seen[1].headers.get(CSRF_HEADER)).toBe("csrf-2");
    expect(api.csrf.get()).toBe("csrf-2");
  });

  it("forgets the token when sign-out succeeds or the session had already ended", async () => {
    const ok = setup(() => json(200, {}), "csrf-3");
    await signOut(ok.api);
    expect(ok.api.csrf.get()).toBeNull();
    const ended = setup(() => json(401, { code: 16, message: "no session" }), "csrf-4");
    await signOut(ended.api);
    expect(ended.api.csrf.get()).toBeNull();
  });

  it("drops a token the gateway no longer takes, and says what to do", async () => {
    const onStaleToken = vi.fn();
    const fetch = vi.fn(async (req: Request) =>
      req.method === "GET"
        ? json(403, { code: 7, message: "origin x may not use this session" })
        : json(403, { code: 7, message: "X-CSRF-Token does not match the session" }),
    );
    const api = new Api({ baseUrl: BASE, csrf: memoryTokens("old"), fetch, onStaleToken });
    // A refusal for another reason keeps the token.
    await api.fetch("/v1/sandboxes").catch(() => {});
    expect(api.csrf.get()).toBe("old");
    const err = await runAction(api, "sbx_a", "pause").catch((e: unknown) => e);
    expect((err as ApiError).code).toBe("PERMISSION_DENIED");
    expect((err as ApiError).message).toMatch(/Sign in again in this tab/);
    expect(api.csrf.get()).toBeNull();
    expect(onStaleToken).toHaveBeenCalledTimes(1);
    // A role's refusal is no stale token.
    const viewer = new Api({
      baseUrl: BASE,
      csrf: memoryTokens("v"),
      fetch: async () => json(403, { code: 7, message: "role ROLE_VIEWER may not call PauseSandbox" }),
      onStaleToken,
    });
    await runAction(viewer, "sbx_a", "pause").catch(() => {});
    expect(viewer.csrf.get()).toBe("v");
    expect(onStaleToken).toHaveBeenCalledTimes(1);
  });

  it("keeps the token in sessionStorage-like storage", () => {
    const m = new Map<string, string>();
    const store = storageTokens({
      getItem: (k) => m.get(k) ?? null,
      setItem: (k, v) => void m.set(k, v),
      removeItem: (k) => void m.delete(k),
    });
    store.set("t");
    expect(m.get("talon.csrf")).toBe("t");
    store.set(null);
    expect(store.get()).toBeNull();
  });

  it("serialises the list's filters as the gateway reads them", async () => {
    const { api, seen } = setup(() => json(200, { sandboxes: [{ sandboxId: "sbx_1" }], nextPageToken: "p2" }));
    const r = await listSandboxes(
      api,
      { states: ["SANDBOX_STATE_RUNNING", "SANDBOX_STATE_PAUSED"], labels: { team: "ml" }, metadata: { run: "r 1" } },
      { pageSize: 100, pageToken: "p1" },
    );
    expect(r).toEqual({ sandboxes: [{ sandboxId: "sbx_1" }], nextPageToken: "p2" });
    const q = new URL(seen[0].url).searchParams;
    expect(q.get("pageSize")).toBe("100");
    expect(q.get("pageToken")).toBe("p1");
    expect(q.getAll("states")).toEqual(["SANDBOX_STATE_RUNNING", "SANDBOX_STATE_PAUSED"]);
    expect(q.get("labelSelector")).toBe("team=ml");
    expect(q.get("metadata[run]")).toBe("r 1");
  });

  it("gives developers and owners controls, viewers none", () => {
    expect(canMutate({ role: "ROLE_OWNER" })).toBe(true);
    expect(canMutate({ role: "ROLE_DEVELOPER" })).toBe(true);
    expect(canMutate({ role: "ROLE_VIEWER" })).toBe(false);
    expect(canMutate({ role: "ROLE_UNSPECIFIED" })).toBe(false);
    expect(canMutate(null)).toBe(false);
  });
});
