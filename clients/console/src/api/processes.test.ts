import { describe, expect, it } from "vitest";
import { describeSelector, processPath, selectorOf, textToBase64 } from "./processes";

describe("process selectors", () => {
  it("prefer the tag, which survives a reload, and escape it", () => {
    expect(selectorOf({ pid: 7, tag: "web" })).toEqual({ tag: "web" });
    expect(selectorOf({ pid: 7 })).toEqual({ pid: 7 });
    expect(processPath("sbx_1", { tag: "a/b c" })).toBe("/v1/sandboxes/sbx_1/processes/tags/a%2Fb%20c");
    expect(processPath("sbx_1", { pid: 42 })).toBe("/v1/sandboxes/sbx_1/processes/42");
    expect(describeSelector({ pid: 42 })).toBe("pid 42");
  });
});

describe("textToBase64", () => {
  it("encodes UTF-8, not Latin-1", () => {
    expect(textToBase64("hi\n")).toBe("aGkK");
    expect(atob(textToBase64("é"))).toBe("\u00c3\u00a9");
  });
});
