import { describe, expect, it } from "vitest";
import {
  auditFilterFromQuery,
  auditFilterToQuery,
  auditQuery,
  emptyAuditFilter,
  firstPage,
  fromLocalInput,
  isMoveRecord,
  mergeNewest,
  methodLabel,
  nextPage,
  previousPage,
  rangeError,
  toLocalInput,
} from "./audit";

describe("audit filters in the address", () => {
  it("round-trips", () => {
    const f = {
      ...emptyAuditFilter(),
      method: "/talon.v1.AdminService/DrainWorker",
      resource: "wrk_1",
      from: "2026-12-07T10:00:00.000Z",
    };
    const q = auditFilterToQuery(f);
    expect(q).toBe("?method=%2Ftalon.v1.AdminService%2FDrainWorker&resource=wrk_1&from=2026-12-07T10%3A00%3A00.000Z");
    expect(auditFilterFromQuery(q)).toEqual(f);
  });

  it("is empty without filters, and drops bad times", () => {
    expect(auditFilterToQuery(emptyAuditFilter())).toBe("");
    expect(auditFilterFromQuery("?from=yesterday&actor=%20usr_1%20")).toEqual({ ...emptyAuditFilter(), actor: "usr_1" });
  });

  it("asks for a tenant only when it may be chosen", () => {
    const f = { ...emptyAuditFilter(), tenant: "ten_1", actor: "usr_1" };
    expect(auditQuery(f, true).tenantId).toBe("ten_1");
    expect(auditQuery(f, false).tenantId).toBe("");
    expect(auditQuery(f, false).actorId).toBe("usr_1");
  });

  it("converts local input times both ways", () => {
    const iso = fromLocalInput("2026-12-07T10:30");
    expect(iso).toMatch(/^2026-12-0[67]T\d\d:30:00\.000Z$/);
    expect(toLocalInput(iso)).toBe("2026-12-07T10:30");
    expect(fromLocalInput("")).toBe("");
    expect(fromLocalInput("nonsense")).toBe("");
    expect(toLocalInput("")).toBe("");
  });

  it("refuses a backwards range", () => {
    const f = { ...emptyAuditFilter(), from: "2026-12-07T10:00:00Z", to: "2026-12-07T09:00:00Z" };
    expect(rangeError(f)).not.toBe("");
    expect(rangeError({ ...f, to: "2026-12-07T11:00:00Z" })).toBe("");
  });
});

describe("paging", () => {
  it("remembers earlier pages", () => {
    let p = firstPage();
    p = nextPage(p, "t1");
    p = nextPage(p, "t2");
    expect(p).toEqual({ back: ["", "t1"], current: "t2" });
    expect(nextPage(p, "")).toBe(p);
    p = previousPage(p);
    expect(p).toEqual({ back: [""], current: "t1" });
    p = previousPage(p);
    expect(p).toEqual(firstPage());
    expect(previousPage(p)).toBe(p);
  });
});

describe("display", () => {
  it("shortens method names", () => {
    expect(methodLabel("/talon.v1.AdminService/DrainWorker")).toBe("AdminService.DrainWorker");
    expect(methodLabel("autopilot.MoveSandbox")).toBe("autopilot.MoveSandbox");
    expect(methodLabel(undefined)).toBe("—");
  });

  it("keeps the moves that happened or were tried", () => {
    expect(isMoveRecord({ method: "/talon.v1.AdminService/ReassignSandbox", outcome: "OK" })).toBe(true);
    expect(isMoveRecord({ method: "/talon.v1.AdminService/ReassignSandbox", outcome: "FAILED_PRECONDITION" })).toBe(true);
    expect(isMoveRecord({ method: "/talon.v1.AdminService/ReassignSandbox", outcome: "PERMISSION_DENIED" })).toBe(false);
    expect(isMoveRecord({ method: "autopilot.WorkerLost", outcome: "UNAVAILABLE" })).toBe(true);
    expect(isMoveRecord({ method: "/talon.v1.AdminService/DrainWorker", outcome: "OK" })).toBe(false);
  });

  it("merges reads newest first, without repeats", () => {
    const e = (id: string) => ({ auditEventId: id });
    expect(mergeNewest([[e("3"), e("1")], [e("10"), e("3")]], 10).map((x) => x.auditEventId)).toEqual(["10", "3", "1"]);
    expect(mergeNewest([[e("3"), e("1")], [e("10")]], 2).length).toBe(2);
  });
});
