import { describe, expect, it } from "vitest";
import { allPages, secretNameError, sizeMib, volumeNameError } from "./tenantData";

describe("name rules", () => {
  it("secrets: environment variable names", () => {
    expect(secretNameError("GH_TOKEN")).toBe("");
    expect(secretNameError("_X")).toBe("");
    expect(secretNameError("")).toBe("Enter a name.");
    expect(secretNameError("1ABC")).not.toBe("");
    expect(secretNameError("gh_token")).not.toBe("");
    expect(secretNameError("A".repeat(128))).toBe("");
    expect(secretNameError("A".repeat(129))).not.toBe("");
  });
  it("volumes: DNS-like names", () => {
    expect(volumeNameError("data-1")).toBe("");
    expect(volumeNameError("-data")).not.toBe("");
    expect(volumeNameError("Data")).not.toBe("");
    expect(volumeNameError("a".repeat(63))).toBe("");
    expect(volumeNameError("a".repeat(64))).not.toBe("");
  });
  it("sizes: empty is the default, else a whole number of MiB", () => {
    expect(sizeMib(" ")).toEqual({ error: "" });
    expect(sizeMib("512")).toEqual({ value: 512, error: "" });
    expect(sizeMib("0").error).not.toBe("");
    expect(sizeMib("1.5").error).not.toBe("");
  });
});

describe("allPages", () => {
  it("follows page tokens until none, and stops at a cap", async () => {
    const pages: Record<string, { items: number[]; next: string }> = {
      "": { items: [1, 2], next: "b" },
      b: { items: [3], next: "c" },
      c: { items: [4], next: "" },
    };
    expect(await allPages(async (t) => pages[t])).toEqual([1, 2, 3, 4]);
    let calls = 0;
    expect(await allPages(async () => ({ items: [calls++], next: "again" }), 3)).toEqual([0, 1, 2]);
  });
});
