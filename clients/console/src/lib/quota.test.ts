import { describe, expect, it } from "vitest";
import { formToQuota, quotaLines, quotaToForm } from "./quota";

describe("quota form", () => {
  it("round-trips a quota", () => {
    const q = { maxSandboxes: "20", maxCpuMillis: "8500", maxMemoryMib: "16384" };
    expect(quotaToForm(q)).toEqual({ sandboxes: "20", cpu: "8.5", memoryMib: "16384" });
    expect(formToQuota(quotaToForm(q))).toEqual({ quota: q, errors: {} });
  });

  it("takes zero, refuses negatives and junk", () => {
    expect(formToQuota({ sandboxes: "0", cpu: "0", memoryMib: "0" }).quota).toEqual({
      maxSandboxes: "0",
      maxCpuMillis: "0",
      maxMemoryMib: "0",
    });
    const r = formToQuota({ sandboxes: "-1", cpu: "1.23456", memoryMib: "lots" });
    expect(r.quota).toBeUndefined();
    expect(Object.keys(r.errors).sort()).toEqual(["cpu", "memoryMib", "sandboxes"]);
  });

  it("lines up usage against limits", () => {
    const lines = quotaLines({
      quota: { maxSandboxes: "10", maxCpuMillis: "4000", maxMemoryMib: "8192" },
      usage: { sandboxes: "2", cpuMillis: "500", memoryMib: "512" },
    });
    expect(lines.map((l) => [l.used, l.limit])).toEqual([
      [2, 10],
      [500, 4000],
      [512, 8192],
    ]);
  });
});
