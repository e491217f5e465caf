import { describe, expect, it } from "vitest";
import { applyCodeEvent, cellSummary, htmlFrameDoc, pickRich, stripAnsi, type CellOutput } from "./cells";

const empty = (): CellOutput => ({ items: [] });

describe("pickRich", () => {
  it("prefers a PNG, shown from its base64 as a data URL", () => {
    const r = pickRich({ "text/plain": "<Figure>", "image/png": "iVBORw0K\nGgo=" });
    expect(r).toEqual({ kind: "image", mime: "image/png", src: "data:image/png;base64,iVBORw0KGgo=" });
  });
  it("refuses an image whose data is not base64 (no URL injection)", () => {
    const r = pickRich({ "image/png": 'x" onerror="alert(1)', "text/plain": "fallback" });
    expect(r).toEqual({ kind: "text", text: "fallback" });
  });
  it("encodes SVG as base64 in a data URL, shown as an image (no script runs there)", () => {
    const r = pickRich({ "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'>é</svg>" });
    expect(r.kind).toBe("image");
    if (r.kind !== "image") return;
    expect(r.src.startsWith("data:image/svg+xml;base64,")).toBe(true);
    const bin = atob(r.src.split(",")[1]);
    expect(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)))).toContain("é");
  });
  it("keeps HTML with its text fallback, and pretty-prints JSON", () => {
    expect(pickRich({ "text/html": "<b>x</b>", "text/plain": "x" })).toEqual({ kind: "html", html: "<b>x</b>", text: "x" });
    expect(pickRich({ "application/json": '{"a":1}' })).toEqual({ kind: "json", text: '{\n  "a": 1\n}' });
    expect(pickRich({ "application/json": "{bad" })).toEqual({ kind: "json", text: "{bad" });
  });
  it("names a type it cannot show instead of showing it", () => {
    expect(pickRich({ "application/x-thing": "abc" })).toEqual({
      kind: "text",
      text: "(application/x-thing, 3 characters: not shown)",
    });
  });
});

describe("htmlFrameDoc", () => {
  it("forbids scripts and fetches inside the frame too", () => {
    const d = htmlFrameDoc("<table><tr><td>1</td></tr></table>");
    expect(d).toContain("default-src 'none'");
    expect(d).toContain("<table>");
  });
});

describe("applyCodeEvent", () => {
  it("joins text of one stream, keeps streams in order, then results, error and the end", () => {
    let o = empty();
    o = applyCodeEvent(o, { stdout: { text: "a" } });
    o = applyCodeEvent(o, { stdout: { text: "b\n" } });
    o = applyCodeEvent(o, { stderr: { text: "warn\n" } });
    o = applyCodeEvent(o, { stdout: { text: "c" } });
    o = applyCodeEvent(o, { result: { data: { "text/plain": "42" }, isMainResult: true } });
    o = applyCodeEvent(o, {
      codeError: { name: "ZeroDivisionError", value: "division by zero", traceback: ["\u001b[0;31mTraceback\u001b[0m", "line 1"] },
    });
    expect(o.items).toEqual([
      { kind: "stream", stream: "stdout", text: "ab\n" },
      { kind: "stream", stream: "stderr", text: "warn\n" },
      { kind: "stream", stream: "stdout", text: "c" },
      { kind: "result", main: true, rich: { kind: "text", text: "42" } },
      { kind: "error", name: "ZeroDivisionError", value: "division by zero", traceback: "Traceback\nline 1" },
    ]);
    expect(cellSummary(o)).toBe("running");
    o = applyCodeEvent(o, { completed: { executionCount: 3, duration: "0.012s" } });
    expect(o.done).toEqual({ executionCount: 3, duration: "0.012s", interrupted: false, timedOut: false });
    expect(cellSummary(o)).toBe("failed in 0.012s");
  });
  it("does not change the object it was given", () => {
    const o = empty();
    applyCodeEvent(o, { stdout: { text: "x" } });
    expect(o.items).toEqual([]);
  });
  it("says interrupted and timed out", () => {
    expect(cellSummary({ items: [], done: { executionCount: 1, duration: "", interrupted: true, timedOut: false } })).toBe(
      "interrupted",
    );
    expect(cellSummary({ items: [], done: { executionCount: 1, duration: "5s", interrupted: false, timedOut: true } })).toBe(
      "timed out in 5s",
    );
  });
});

describe("stripAnsi", () => {
  it("removes colour codes only", () => {
    expect(stripAnsi("\u001b[1;32mok\u001b[0m done")).toBe("ok done");
  });
});
