import { describe, expect, it } from "vitest";
import { fraction, imageNameError, importBody, prewarmState } from "./images";

describe("imageNameError", () => {
  it("takes references, refuses the rest", () => {
    expect(imageNameError("python-3.12")).toBe("");
    expect(imageNameError("acme/agent:1.4")).toBe("");
    expect(imageNameError("")).toBe("Enter a name.");
    expect(imageNameError("Python")).not.toBe("");
    expect(imageNameError("-x")).not.toBe("");
  });
});

describe("importBody", () => {
  it("is the header, then the file in chunks, as NDJSON whose bytes decode back", async () => {
    const bytes = new Uint8Array(2.5 * (1 << 20)).map((_, i) => (i * 7) & 0xff);
    const seen: number[] = [];
    const body = await importBody("img", new Blob([bytes]), (n) => seen.push(n));
    const lines = (await body.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ header: { name: "img" } });
    expect(lines.length).toBe(4);
    const bin = lines.slice(1).map((l) => atob(l.data)).join("");
    expect(bin.length).toBe(bytes.length);
    let same = true;
    for (let i = 0; i < bin.length; i++) if (bin.charCodeAt(i) !== bytes[i]) same = false;
    expect(same).toBe(true);
    expect(seen).toEqual([1 << 20, 2 << 20, bytes.length]);
  });
});

describe("prewarm progress", () => {
  it("keeps each worker's latest, merging fields", () => {
    let s = prewarmState({}, { workerId: "w1", phase: "unpacking", bytesDone: "10", bytesTotal: "100" });
    s = prewarmState(s, { workerId: "w2", phase: "unpacking" });
    s = prewarmState(s, { workerId: "w1", phase: "pool", poolReady: 2 });
    expect(s.w1).toEqual({ workerId: "w1", phase: "pool", bytesDone: "10", bytesTotal: "100", poolReady: 2 });
    expect(fraction(s.w1)).toBe(0.1);
    expect(fraction(s.w2)).toBeNull();
  });
});
