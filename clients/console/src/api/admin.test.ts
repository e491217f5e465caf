import { describe, expect, it, vi } from "vitest";
import { ApiError, describe as describeError } from "./errors";
import { drainWorker, isOwner, isPlatformAdmin, keyRoles, listAuditEvents, reassignSandbox, updateUser } from "./admin";
import { Api, CSRF_HEADER, memoryTokens } from "./client";

const BASE = "http://talon.test";
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function setup(answer: (req: Request) => Response) {
  const seen: { method: string; url: URL; body: string; csrf: string | null }[] = [];
  const fetch = vi.fn(async (req: Request) => {
    seen.push({ method: req.method, url: new URL(req.url), body: await req.clone().text(), csrf: req.headers.get(CSRF_HEADER) });
    return answer(req);
  });
  return { api: new Api({ baseUrl: BASE, csrf: memoryTokens("tok"), fetch }), seen };
}

describe("who sees what", () => {
  it("tells owners and platform admins apart", () => {
    expect(isOwner({ role: "ROLE_OWNER" })).toBe(true);
    expect(isOwner({ role: "ROLE_DEVELOPER" })).toBe(false);
    expect(isOwner({ role: "ROLE_VIEWER", platformAdmin: true })).toBe(true);
    expect(isOwner(null)).toBe(false);
    expect(isPlatformAdmin({ role: "ROLE_OWNER" })).toBe(false);
    expect(isPlatformAdmin({ role: "ROLE_OWNER", platformAdmin: true })).toBe(true);
  });

  it("offers key roles no higher than one's own", () => {
    expect(keyRoles("ROLE_OWNER")).toEqual(["ROLE_OWNER", "ROLE_DEVELOPER", "ROLE_VIEWER"]);
    expect(keyRoles("ROLE_DEVELOPER")).toEqual(["ROLE_DEVELOPER", "ROLE_VIEWER"]);
    expect(keyRoles(undefined)).toEqual(["ROLE_VIEWER"]);
  });
});

describe("admin calls", () => {
  it("drains and undrains with the CSRF token", async () => {
    const { api, seen } = setup(() => json(200, { worker: { workerId: "wrk_1", state: "WORKER_STATE_DRAINING" } }));
    expect((await drainWorker(api, "wrk_1", false))?.state).toBe("WORKER_STATE_DRAINING");
    await drainWorker(api, "wrk_1", true);
    expect(seen.map((s) => [s.method, s.url.pathname, s.body, s.csrf])).toEqual([
      ["POST", "/v1/admin/workers/wrk_1:drain", "{}", "tok"],
      ["POST", "/v1/admin/workers/wrk_1:drain", '{"undrain":true}', "tok"],
    ]);
  });

  it("moves a sandbox, to a worker or the scheduler's choice", async () => {
    const { api, seen } = setup(() => json(200, { workerId: "wrk_2", generation: "3" }));
    expect(await reassignSandbox(api, "sbx_1", "wrk_2")).toEqual({ workerId: "wrk_2", generation: "3" });
    await reassignSandbox(api, "sbx_1", "");
    expect(seen.map((s) => [s.url.pathname, s.body])).toEqual([
      ["/v1/admin/sandboxes/sbx_1:reassign", '{"workerId":"wrk_2"}'],
      ["/v1/admin/sandboxes/sbx_1:reassign", "{}"],
    ]);
  });

  it("asks the audit log only for the filters that are set", async () => {
    const { api, seen } = setup(() => json(200, { auditEvents: [{ auditEventId: "1" }], nextPageToken: "n" }));
    const r = await listAuditEvents(api, { method: "/talon.v1.AdminService/DrainWorker", actorId: "", startTime: "2026-12-07T10:00:00.000Z" }, { pageToken: "p" });
    expect(r).toEqual({ events: [{ auditEventId: "1" }], nextPageToken: "n" });
    const q = Object.fromEntries(seen[0].url.searchParams);
    expect(q).toEqual({ pageSize: "50", pageToken: "p", method: "/talon.v1.AdminService/DrainWorker", startTime: "2026-12-07T10:00:00.000Z" });
  });

  it("turns the last-owner refusal into a readable error", async () => {
    const { api } = setup(() => json(400, { code: 9, message: "a tenant must keep at least one active owner" }));
    const e = await updateUser(api, "-", "usr_1", { role: "ROLE_VIEWER" }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(describeError(e)).toEqual({
      title: "Not possible in its current state",
      message: "a tenant must keep at least one active owner",
      code: "FAILED_PRECONDITION",
    });
  });
});
