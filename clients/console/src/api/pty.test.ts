import { describe, expect, it } from "vitest";
import {
  type SocketLike,
  binaryBytes,
  checkSize,
  connectPty,
  inputBytes,
  openFrame,
  parseFrame,
  ptyUrl,
  resizeFrame,
} from "./pty";

describe("PTY frames", () => {
  it("opens a new shell or a running process with its size", () => {
    expect(JSON.parse(openFrame({ command: [] }, { cols: 120, rows: 40 }))).toEqual({
      open: { command: { command: [] }, size: { cols: 120, rows: 40 } },
    });
    expect(JSON.parse(openFrame({ command: ["bash", "-l"], cwd: "/workspace", tag: "t1" }, { cols: 80, rows: 24 }))).toEqual({
      open: { command: { command: ["bash", "-l"], cwd: "/workspace", tag: "t1" }, size: { cols: 80, rows: 24 } },
    });
    expect(JSON.parse(openFrame({ pid: 42 }, { cols: 80, rows: 24 }))).toEqual({
      open: { process: { pid: 42 }, size: { cols: 80, rows: 24 } },
    });
    expect(JSON.parse(openFrame({ processTag: "dev" }, { cols: 1, rows: 1 })).open.process).toEqual({ tag: "dev" });
  });

  it("resizes within the kernel's 16-bit winsize", () => {
    expect(resizeFrame({ cols: 100, rows: 30 })).toBe('{"resize":{"cols":100,"rows":30}}');
    expect(() => checkSize({ cols: 0, rows: 10 })).toThrow(RangeError);
    expect(() => checkSize({ cols: 65536, rows: 10 })).toThrow(RangeError);
    expect(() => checkSize({ cols: 10.5, rows: 10 })).toThrow(RangeError);
  });

  it("sends input as bytes: UTF-8 for text, one byte per char for binary", () => {
    expect([...inputBytes("é\r")]).toEqual([0xc3, 0xa9, 0x0d]);
    expect([...binaryBytes("\x1b[M\xff")]).toEqual([0x1b, 0x5b, 0x4d, 0xff]);
  });

  it("reads the server's frames", () => {
    expect(parseFrame('{"pid":17}')).toEqual({ kind: "pid", pid: 17 });
    const out = parseFrame(new Uint8Array([104, 105]).buffer);
    expect(out.kind === "output" && [...out.data]).toEqual([104, 105]);
    const b64 = parseFrame('{"output":"aGk="}');
    expect(b64.kind === "output" && new TextDecoder().decode(b64.data)).toBe("hi");
    expect(parseFrame('{"exited":{"exitCode":3,"endTime":"2025-01-01T00:00:00Z"}}')).toEqual({
      kind: "exited",
      exitCode: 3,
      signal: 0,
      timedOut: false,
    });
    const err = parseFrame('{"error":{"code":9,"message":"sandbox is paused"}}');
    expect(err.kind === "error" && [err.error.code, err.error.message]).toEqual(["FAILED_PRECONDITION", "sandbox is paused"]);
    expect(parseFrame("{}")).toEqual({ kind: "unknown" });
    expect(parseFrame("nope").kind).toBe("error");
  });

  it("addresses the socket on the page's origin", () => {
    expect(ptyUrl({ protocol: "https:", host: "talon.example:8443" }, "sbx_a")).toBe("wss://talon.example:8443/v1/sandboxes/sbx_a/pty");
    expect(ptyUrl({ protocol: "http:", host: "127.0.0.1:8080" }, "a/b")).toBe("ws://127.0.0.1:8080/v1/sandboxes/a%2Fb/pty");
  });
});

class FakeSocket implements SocketLike {
  binaryType: BinaryType = "blob";
  readyState = 0;
  sent: (string | Uint8Array)[] = [];
  closed: [number | undefined, string | undefined] | null = null;
  onopen: ((ev: Event) => void) | null = null;
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onclose: ((ev: CloseEvent) => void) | null = null;
  onerror: ((ev: Event) => void) | null = null;
  send(d: string | ArrayBufferView) {
    this.sent.push(typeof d === "string" ? d : new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
  }
  close(code?: number, reason?: string) {
    this.closed = [code, reason];
  }
  open() {
    this.readyState = 1;
    this.onopen?.(new Event("open"));
  }
  message(data: string | ArrayBuffer) {
    this.onmessage?.({ data } as MessageEvent);
  }
  end(code: number, reason = "") {
    this.readyState = 3;
    this.onclose?.({ code, reason } as CloseEvent);
  }
}

describe("connectPty", () => {
  it("speaks the frame protocol over the socket", () => {
    const ws = new FakeSocket();
    const got: string[] = [];
    const log: unknown[] = [];
    const s = connectPty(() => ws, { command: [] }, { cols: 80, rows: 24 }, {
      onPid: (p) => log.push(["pid", p]),
      onOutput: (d) => got.push(new TextDecoder().decode(d)),
      onExit: (e) => log.push(["exit", e.exitCode]),
      onError: (e) => log.push(["error", e.message]),
      onClose: (c) => log.push(["close", c.code, c.exited]),
    });
    expect(ws.binaryType).toBe("arraybuffer");
    s.send("dropped before open");
    s.resize({ cols: 100, rows: 30 });
    ws.open();
    expect(JSON.parse(ws.sent[0] as string)).toEqual({ open: { command: { command: [] }, size: { cols: 100, rows: 30 } } });
    ws.message('{"pid":9}');
    expect(s.pid).toBe(9);
    s.send("echo $((6*7))\r");
    expect(new TextDecoder().decode(ws.sent[1] as Uint8Array)).toBe("echo $((6*7))\r");
    s.resize({ cols: 100, rows: 30 }); // unchanged: not sent
    s.resize({ cols: 90, rows: 30 });
    expect(ws.sent[2]).toBe('{"resize":{"cols":90,"rows":30}}');
    ws.message(new TextEncoder().encode("42\r\n").buffer as ArrayBuffer);
    ws.message('{"exited":{"exitCode":0}}');
    ws.end(1000);
    expect(got).toEqual(["42\r\n"]);
    expect(log).toEqual([["pid", 9], ["exit", 0], ["close", 1000, true]]);
    expect(ws.sent).toHaveLength(3);
  });

  it("reports an error frame, and a close before the process ended", () => {
    const ws = new FakeSocket();
    const errors: string[] = [];
    connectPty(() => ws, { pid: 3 }, { cols: 80, rows: 24 }, { onOutput: () => {}, onError: (e) => errors.push(`${e.code}: ${e.message}`) });
    ws.open();
    ws.message('{"error":{"code":5,"message":"process 3 not found"}}');
    ws.end(1011, "process 3 not found");
    expect(errors).toEqual(["NOT_FOUND: process 3 not found"]);

    const ws2 = new FakeSocket();
    const errors2: string[] = [];
    connectPty(() => ws2, { command: [] }, { cols: 80, rows: 24 }, { onOutput: () => {}, onError: (e) => errors2.push(e.code) });
    ws2.open();
    ws2.end(1006);
    expect(errors2).toEqual(["UNAVAILABLE"]);
  });

  it("closes the socket when asked", () => {
    const ws = new FakeSocket();
    const s = connectPty(() => ws, { command: [] }, { cols: 80, rows: 24 }, { onOutput: () => {} });
    s.close();
    expect(ws.closed?.[0]).toBe(1000);
  });
});
