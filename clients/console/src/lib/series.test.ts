import { describe, expect, it } from "vitest";
import { Series, bytes, linePoints, sampleOf } from "./series";

const s = (t: number, cpuPct = 0) => ({ t, cpuPct, memUsed: 0, memTotal: 0, diskUsed: 0, diskTotal: 0 });

describe("Series", () => {
  it("keeps the newest samples up to its capacity and ignores repeats", () => {
    const x = new Series(3);
    expect(x.push(s(1))).toBe(true);
    expect(x.push(s(1))).toBe(false);
    x.push(s(2));
    x.push(s(3));
    x.push(s(4));
    expect(x.samples.map((v) => v.t)).toEqual([2, 3, 4]);
  });
});

describe("linePoints", () => {
  it("scales from 0 at the bottom to the max at the top, clamped", () => {
    expect(linePoints([0, 50, 100, 150], 30, 10, 100)).toBe("0,10 10,5 20,0 30,0");
    expect(linePoints([2, 4], 10, 10)).toBe("0,5 10,0");
    expect(linePoints([5], 10, 10)).toBe("0,0");
    expect(linePoints([], 10, 10)).toBe("");
    expect(linePoints([0, 0], 10, 10)).toBe("0,10 10,10");
  });
});

describe("bytes and sampleOf", () => {
  it("reads the API's strings and writes short sizes", () => {
    expect(bytes(512)).toBe("512 B");
    expect(bytes(1536)).toBe("1.5 KiB");
    expect(bytes(300 * 1024 * 1024)).toBe("300 MiB");
    expect(
      sampleOf({ sampleTime: "2026-12-07T10:00:00Z", cpuUsedPct: 12.5, memUsedBytes: "1048576", memTotalBytes: "2097152" }),
    ).toEqual({ t: Date.parse("2026-12-07T10:00:00Z"), cpuPct: 12.5, memUsed: 1048576, memTotal: 2097152, diskUsed: 0, diskTotal: 0 });
    expect(sampleOf({})).toBeNull();
  });
});
