import { describe, expect, it } from "vitest";
import { matchRoute } from "./routes";

describe("owner and admin routes", () => {
  it("maps the owner pages", () => {
    expect(matchRoute("/keys")).toEqual({ name: "keys" });
    expect(matchRoute("/tenant")).toEqual({ name: "tenant", section: "users" });
    expect(matchRoute("/tenant/users/")).toEqual({ name: "tenant", section: "users" });
    expect(matchRoute("/tenant/quota")).toEqual({ name: "tenant", section: "quota" });
    expect(matchRoute("/tenant/audit")).toEqual({ name: "tenant", section: "audit" });
  });

  it("maps the admin pages", () => {
    expect(matchRoute("/admin")).toEqual({ name: "admin", section: "workers" });
    expect(matchRoute("/admin/workers")).toEqual({ name: "admin", section: "workers" });
    expect(matchRoute("/admin/tenants")).toEqual({ name: "admin", section: "tenants" });
    expect(matchRoute("/admin/audit")).toEqual({ name: "admin", section: "audit" });
    expect(matchRoute("/admin/metrics")).toEqual({ name: "admin", section: "metrics" });
    expect(matchRoute("/admin/tenants/ten_a%20b")).toEqual({ name: "adminTenant", id: "ten_a b" });
  });

  it("refuses what is not a page", () => {
    for (const p of ["/keys/x", "/tenant/workers", "/admin/users", "/admin/workers/wrk_1", "/tenant/users/usr_1", "/tenant/metrics", "/admin/metrics/x", "/admin/tenants/%E0%A4%A"]) {
      expect(matchRoute(p)).toEqual({ name: "notFound", path: p });
    }
    expect(matchRoute("/admins")).toEqual({ name: "notFound", path: "/admins" });
  });
});
