import { describe, expect, it } from "vitest";
import { applyAgentEvent, emptyRun, rememberRun, rememberedRuns } from "./agents";

describe("applyAgentEvent", () => {
  it("builds a run from its events, each path once with its first kind, and skips replayed events", () => {
    let r = emptyRun();
    r = applyAgentEvent(r, { seq: "1", started: { pid: 9, runId: "run_a" } });
    r = applyAgentEvent(r, { seq: "2", output: { stream: "OUTPUT_STREAM_STDOUT", text: "thinking" } });
    r = applyAgentEvent(r, { seq: "3", fileChange: { path: "/workspace/a.py", kind: "FILE_EVENT_TYPE_CREATE" } });
    r = applyAgentEvent(r, { seq: "4", fileChange: { path: "/workspace/a.py", kind: "FILE_EVENT_TYPE_WRITE" } });
    r = applyAgentEvent(r, { seq: "5", output: { stream: "OUTPUT_STREAM_STDERR", text: "warn" } });
    const before = r;
    r = applyAgentEvent(r, { seq: "5", output: { stream: "OUTPUT_STREAM_STDOUT", text: "again" } });
    expect(r).toBe(before);
    r = applyAgentEvent(r, { seq: "6", completed: { exitCode: 0, duration: "1.5s" } });
    expect(r).toEqual({
      runId: "run_a",
      pid: 9,
      lines: [
        { stream: "stdout", text: "thinking" },
        { stream: "stderr", text: "warn" },
      ],
      changes: [{ path: "/workspace/a.py", kind: "FILE_EVENT_TYPE_CREATE" }],
      done: { exitCode: 0, timedOut: false, duration: "1.5s" },
      seq: 6,
      dropped: 0,
    });
  });
});

describe("remembered runs", () => {
  it("keeps the newest first, once each, at most 20, and survives junk", () => {
    const m = new Map<string, string>();
    const store = { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
    rememberRun(store, "sbx", "a");
    rememberRun(store, "sbx", "b");
    expect(rememberRun(store, "sbx", "a")).toEqual(["a", "b"]);
    for (let i = 0; i < 30; i++) rememberRun(store, "sbx", `r${i}`);
    expect(rememberedRuns(store, "sbx").length).toBe(20);
    m.set("talon.agentRuns.x", "{oops");
    expect(rememberedRuns(store, "x")).toEqual([]);
  });
});
