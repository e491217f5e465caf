import { describe, expect, it } from "vitest";
import { windowSizeError } from "./browser";

describe("windowSizeError", () => {
  it("takes W,H within bounds, or nothing", () => {
    expect(windowSizeError("")).toBe("");
    expect(windowSizeError("1280,720")).toBe("");
    expect(windowSizeError("1280x720")).not.toBe("");
    expect(windowSizeError("99,800")).not.toBe("");
    expect(windowSizeError("7681,800")).not.toBe("");
    expect(windowSizeError("1280,")).not.toBe("");
  });
});
