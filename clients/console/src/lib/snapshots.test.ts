import { describe, expect, it } from "vitest";
import { forkCount, frozenLabel, previewPort, previewTtl, snapshotNameError, snapshotStep } from "./snapshots";

describe("the snapshot, fork and preview forms", () => {
  it("checks snapshot names (empty lets the server make one)", () => {
    expect(snapshotNameError("")).toBeUndefined();
    expect(snapshotNameError("before-upgrade_1.2")).toBeUndefined();
    expect(snapshotNameError("with space")).toMatch(/1 to 128/);
    expect(snapshotNameError("x".repeat(129))).toMatch(/1 to 128/);
  });

  it("checks a fork count", () => {
    expect(forkCount("3")).toBe(3);
    expect(forkCount(" 20 ")).toBe(20);
    expect(forkCount("0")).toBe("The count must be 1 to 20");
    expect(forkCount("21")).toBe("The count must be 1 to 20");
    expect(forkCount("two")).toBe("The count must be a whole number");
  });

  it("checks a preview's port and lifetime", () => {
    expect(previewPort("8000")).toBe(8000);
    expect(previewPort("0")).toMatch(/1 to 65,535/);
    expect(previewPort("70000")).toMatch(/1 to 65,535/);
    expect(previewPort("9222")).toMatch(/DevTools/);
    expect(previewTtl("")).toBeUndefined();
    expect(previewTtl("600")).toBe(600);
    expect(previewTtl("86401")).toMatch(/1 to 86,400/);
  });

  it("says how long a snapshot froze its sandbox", () => {
    expect(frozenLabel("0.0125s")).toBe("13 ms");
    expect(frozenLabel("0.0001s")).toBe("1 ms");
    expect(frozenLabel("2.25s")).toBe("2.3 s");
    expect(frozenLabel("0s")).toBe("not frozen");
    expect(frozenLabel(undefined)).toBe("—");
  });

  it("shows a snapshot's progress, short of the end until it is done", () => {
    const b = (n: number) => `${n} B`;
    expect(snapshotStep({}, b)).toEqual({ label: "Starting: 0 B", fraction: null });
    expect(snapshotStep({ phase: "copying", bytesDone: "25", bytesTotal: "100" }, b)).toEqual({
      label: "Copying the files (the sandbox is frozen meanwhile): 25 B of about 100 B",
      fraction: 0.25,
    });
    // The total is the disk in use, an estimate the copy may pass.
    expect(snapshotStep({ phase: "publishing", bytesDone: 120, bytesTotal: 100 }, b).fraction).toBe(0.99);
    expect(snapshotStep({ phase: "copying", bytesDone: "7" }, b)).toEqual({
      label: "Copying the files (the sandbox is frozen meanwhile): 7 B",
      fraction: null,
    });
    expect(snapshotStep({ phase: "done", bytesDone: "90", bytesTotal: "100" }, b)).toEqual({ label: "Done: 90 B", fraction: 1 });
    expect(snapshotStep({ phase: "later-phase" }, b).label).toBe("later-phase: 0 B");
  });
});
