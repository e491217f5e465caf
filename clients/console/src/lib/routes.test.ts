import { describe, expect, it } from "vitest";
import { matchRoute, sandboxPath, stripBase } from "./routes";

describe("routes", () => {
  it("maps paths to pages", () => {
    expect(matchRoute("/")).toEqual({ name: "home" });
    expect(matchRoute("")).toEqual({ name: "home" });
    expect(matchRoute("/sign-in")).toEqual({ name: "signIn" });
    expect(matchRoute("/me/")).toEqual({ name: "me" });
    expect(matchRoute("/sandboxes")).toEqual({ name: "sandboxes" });
    expect(matchRoute("/sandboxes/sbx_a")).toEqual({ name: "sandbox", id: "sbx_a", tab: "overview" });
    expect(matchRoute("/sandboxes/sbx_a/run")).toEqual({ name: "sandbox", id: "sbx_a", tab: "run" });
    expect(matchRoute("/sandboxes/sbx_a/terminal/")).toEqual({ name: "sandbox", id: "sbx_a", tab: "terminal" });
    for (const tab of ["files", "previews", "snapshots", "network"] as const) {
      expect(matchRoute(`/sandboxes/sbx_a/${tab}`)).toEqual({ name: "sandbox", id: "sbx_a", tab });
    }
    expect(matchRoute("/sandboxes/sbx_a/nope")).toEqual({ name: "notFound", path: "/sandboxes/sbx_a/nope" });
    expect(matchRoute("/nope")).toEqual({ name: "notFound", path: "/nope" });
    expect(matchRoute("/sandboxes/%E0%A4%A")).toEqual({ name: "notFound", path: "/sandboxes/%E0%A4%A" });
  });

  it("strips the base", () => {
    expect(stripBase("/console/", "/console/")).toBe("/");
    expect(stripBase("/console", "/console/")).toBe("/");
    expect(stripBase("/console/sandboxes/x", "/console/")).toBe("/sandboxes/x");
    expect(stripBase("/consoles", "/console/")).toBeNull();
    expect(stripBase("/v1/sandboxes", "/console")).toBeNull();
  });

  it("builds a sandbox's paths", () => {
    expect(sandboxPath("sbx_a")).toBe("/sandboxes/sbx_a");
    expect(sandboxPath("sbx_a", "terminal")).toBe("/sandboxes/sbx_a/terminal");
  });
});
