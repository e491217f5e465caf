import { describe, expect, it } from "vitest";
import { OutputLog, exitSummary } from "./output";

const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const out = (stream: "OUTPUT_STREAM_STDOUT" | "OUTPUT_STREAM_STDERR", data: Uint8Array | string) => ({
  output: { stream, data: b64(typeof data === "string" ? new TextEncoder().encode(data) : data) },
});

describe("a command's output", () => {
  it("decodes each stream as UTF-8 across chunk boundaries, in order", () => {
    const log = new OutputLog();
    log.apply({ started: { pid: 12 } });
    const bytes = new TextEncoder().encode("naïve ✓\n");
    log.apply(out("OUTPUT_STREAM_STDOUT", bytes.slice(0, 3))); // ends inside "ï"
    log.apply(out("OUTPUT_STREAM_STDERR", "oops\n"));
    log.apply(out("OUTPUT_STREAM_STDOUT", bytes.slice(3)));
    log.apply({ exited: { exitCode: 2 } });
    expect(log.pid).toBe(12);
    expect(log.text("stdout")).toBe("naïve ✓\n");
    expect(log.text("stderr")).toBe("oops\n");
    expect(log.segments.map((s) => s.stream)).toEqual(["stdout", "stderr", "stdout"]);
    expect(log.exit).toEqual({ exitCode: 2, signal: 0, timedOut: false });
  });

  it("joins consecutive chunks of one stream", () => {
    const log = new OutputLog();
    for (const s of ["a", "b", "c"]) log.apply(out("OUTPUT_STREAM_STDOUT", s));
    expect(log.segments).toEqual([{ stream: "stdout", text: "abc" }]);
  });

  it("drops the oldest text past its limit", () => {
    const log = new OutputLog(10);
    log.apply(out("OUTPUT_STREAM_STDOUT", "0123456"));
    log.apply(out("OUTPUT_STREAM_STDERR", "abcdef"));
    expect(log.segments).toEqual([
      { stream: "stdout", text: "3456" },
      { stream: "stderr", text: "abcdef" },
    ]);
    expect(log.dropped).toBe(3);
    log.apply(out("OUTPUT_STREAM_STDOUT", "XYZWVUTSRQ"));
    expect(log.segments).toEqual([{ stream: "stdout", text: "XYZWVUTSRQ" }]);
    expect(log.dropped).toBe(13);
  });

  it("says how a process ended", () => {
    expect(exitSummary({ exitCode: 0, signal: 0, timedOut: false })).toBe("exit code 0");
    expect(exitSummary({ exitCode: -1, signal: 9, timedOut: false })).toBe("killed by signal 9");
    expect(exitSummary({ exitCode: -1, signal: 9, timedOut: true })).toBe("killed after its timeout (signal 9)");
  });
});
