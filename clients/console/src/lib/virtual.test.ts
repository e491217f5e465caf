import { describe, expect, it } from "vitest";
import { nearEnd, scrollToRow, visibleWindow } from "./virtual";

describe("visibleWindow", () => {
  it("renders the rows in view and the overscan either side", () => {
    expect(visibleWindow({ scrollTop: 0, viewportHeight: 440, rowHeight: 44, count: 1000, overscan: 5 })).toEqual({
      start: 0,
      end: 15,
      padTop: 0,
      padBottom: 985 * 44,
      total: 44000,
    });
    const w = visibleWindow({ scrollTop: 44 * 500 + 10, viewportHeight: 440, rowHeight: 44, count: 1000, overscan: 5 });
    expect([w.start, w.end]).toEqual([495, 516]);
    expect(w.padTop + (w.end - w.start) * 44 + w.padBottom).toBe(w.total);
  });

  it("keeps the DOM small however long the list is", () => {
    for (const count of [1000, 100_000]) {
      const w = visibleWindow({ scrollTop: 12_345, viewportHeight: 800, rowHeight: 44, count });
      expect(w.end - w.start).toBeLessThanOrEqual(Math.ceil(800 / 44) + 1 + 12);
    }
  });

  it("clamps at the end and past it", () => {
    const w = visibleWindow({ scrollTop: 1e9, viewportHeight: 440, rowHeight: 44, count: 100, overscan: 2 });
    expect([w.start, w.end, w.padBottom]).toEqual([88, 100, 0]);
    const neg = visibleWindow({ scrollTop: -50, viewportHeight: 440, rowHeight: 44, count: 100, overscan: 2 });
    expect(neg.start).toBe(0);
  });

  it("handles lists shorter than the viewport, and empty ones", () => {
    expect(visibleWindow({ scrollTop: 0, viewportHeight: 1000, rowHeight: 44, count: 3 })).toEqual({
      start: 0,
      end: 3,
      padTop: 0,
      padBottom: 0,
      total: 132,
    });
    expect(visibleWindow({ scrollTop: 0, viewportHeight: 1000, rowHeight: 44, count: 0 }).end).toBe(0);
    expect(visibleWindow({ scrollTop: 0, viewportHeight: 0, rowHeight: 44, count: 10, overscan: 0 }).end).toBe(1);
  });
});

describe("scrollToRow", () => {
  it("moves as little as needed", () => {
    expect(scrollToRow(5, 0, 440, 44)).toBe(0); // already in view
    expect(scrollToRow(10, 0, 440, 44)).toBe(44); // just below: its bottom at the view's bottom
    expect(scrollToRow(2, 440, 440, 44)).toBe(88); // above: its top at the view's top
    expect(scrollToRow(999, 0, 440, 44)).toBe(44000 - 440);
  });
});

describe("nearEnd", () => {
  it("asks for the next page when the window comes within the threshold", () => {
    const w = visibleWindow({ scrollTop: 0, viewportHeight: 440, rowHeight: 44, count: 200, overscan: 5 });
    expect(nearEnd(w, 200, 50)).toBe(false);
    const w2 = visibleWindow({ scrollTop: 44 * 140, viewportHeight: 440, rowHeight: 44, count: 200, overscan: 5 });
    expect(nearEnd(w2, 200, 50)).toBe(true);
  });
});
