/**
 * The PTY over a WebSocket (`GET /v1/sandboxes/{id}/pty`, PtyService.Attach
 * bridged by gateway-rest/src/ws.rs; clients/dotnet's PtyWire speaks the
 * same). Client → server: text frames are JSON AttachRequests, the first
 * `{"open": {...}}`, then `{"resize": {cols, rows}}`; a binary frame is raw
 * input. Server → client: `{"pid": n}` as text, output as binary frames,
 * `{"exited": {...}}` as text, and a failure as a last text frame
 * `{"error": status}` before the close (1011, or 1008 for a bad frame).
 * The browser's session cookie authenticates the socket (same origin).
 */
import { ApiError, errorFromBody } from "./errors";

export const PROTOCOL = "talon.v1";

export interface Size {
  cols: number;
  rows: number;
}

/** A terminal is 1 to 65535 columns and rows (the kernel's winsize is 16-bit). */
export function checkSize(s: Size): Size {
  const ok = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;
  if (!ok(s.cols) || !ok(s.rows)) {
    throw new RangeError(`a terminal is 1 to 65535 columns and rows, not ${s.cols}x${s.rows}`);
  }
  return { cols: s.cols, rows: s.rows };
}

/** The socket's URL for a page at `loc` (ws for http, wss for https). */
export function ptyUrl(loc: { protocol: string; host: string }, sandboxId: string): string {
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${loc.host}/v1/sandboxes/${encodeURIComponent(sandboxId)}/pty`;
}

export type Target = { command?: string[]; cwd?: string; tag?: string } | { pid: number } | { processTag: string };

/** The first frame: a new process (the login shell by default) or a running one. */
export function openFrame(target: Target, size: Size): string {
  const s = checkSize(size);
  if ("pid" in target) return JSON.stringify({ open: { process: { pid: target.pid }, size: s } });
  if ("processTag" in target) return JSON.stringify({ open: { process: { tag: target.processTag }, size: s } });
  const command: Record<string, unknown> = { command: target.command ?? [] };
  if (target.cwd) command.cwd = target.cwd;
  if (target.tag) command.tag = target.tag;
  return JSON.stringify({ open: { command, size: s } });
}

export function resizeFrame(size: Size): string {
  return JSON.stringify({ resize: checkSize(size) });
}

const utf8 = new TextEncoder();

/** Keystrokes (xterm's onData: text) as a binary frame's bytes. */
export function inputBytes(data: string): Uint8Array {
  return utf8.encode(data);
}

/** xterm's onBinary data (one byte per char, e.g. mouse reports). */
export function binaryBytes(data: string): Uint8Array {
  const b = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) b[i] = data.charCodeAt(i) & 0xff;
  return b;
}

export type ServerFrame =
  | { kind: "pid"; pid: number }
  | { kind: "output"; data: Uint8Array }
  | { kind: "exited"; exitCode: number; signal: number; timedOut: boolean }
  | { kind: "error"; error: ApiError }
  | { kind: "unknown" };

function base64Bytes(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

/** One frame of the server. */
export function parseFrame(data: string | ArrayBuffer | Uint8Array): ServerFrame {
  if (typeof data !== "string") return { kind: "output", data: data instanceof Uint8Array ? data : new Uint8Array(data) };
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(data) as Record<string, unknown>;
  } catch {
    return { kind: "error", error: new ApiError("INTERNAL", `the terminal sent a text frame that is not JSON: ${data.slice(0, 80)}`) };
  }
  if (d.error && typeof d.error === "object") return { kind: "error", error: errorFromBody(0, d.error) };
  if (typeof d.pid === "number") return { kind: "pid", pid: d.pid };
  if (d.exited && typeof d.exited === "object") {
    const e = d.exited as { exitCode?: number; signal?: number; timedOut?: boolean };
    return { kind: "exited", exitCode: e.exitCode ?? 0, signal: e.signal ?? 0, timedOut: e.timedOut ?? false };
  }
  if (typeof d.output === "string") return { kind: "output", data: base64Bytes(d.output) };
  return { kind: "unknown" };
}

/** The part of a WebSocket the session uses (a fake in tests). */
export interface SocketLike {
  binaryType: BinaryType;
  readyState: number;
  send(data: string | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: Event) => void) | null;
  onmessage: ((ev: MessageEvent) => void) | null;
  onclose: ((ev: CloseEvent) => void) | null;
  onerror: ((ev: Event) => void) | null;
}

export interface PtyHandlers {
  onPid?: (pid: number) => void;
  onOutput: (data: Uint8Array) => void;
  onExit?: (e: { exitCode: number; signal: number; timedOut: boolean }) => void;
  onError?: (e: ApiError) => void;
  /** The socket closed; `exited` says whether the process had ended. */
  onClose?: (c: { code: number; reason: string; exited: boolean }) => void;
}

const OPEN = 1;

export interface PtySession {
  send(data: string): void;
  sendBinary(data: string): void;
  resize(size: Size): void;
  close(): void;
  readonly pid: number | undefined;
}

/**
 * Opens a terminal: the open frame goes out as soon as the socket is
 * open, with the latest size asked for; input before that is dropped
 * (nothing could have prompted it).
 */
export function connectPty(
  makeSocket: () => SocketLike,
  target: Target,
  size: Size,
  h: PtyHandlers,
): PtySession {
  const ws = makeSocket();
  ws.binaryType = "arraybuffer";
  let current = checkSize(size);
  let opened = false;
  let exited = false;
  let pid: number | undefined;
  let failed = false;
  ws.onopen = () => {
    opened = true;
    ws.send(openFrame(target, current));
  };
  ws.onmessage = (ev: MessageEvent) => {
    const f = parseFrame(ev.data as string | ArrayBuffer);
    switch (f.kind) {
      case "pid":
        pid = f.pid;
        h.onPid?.(f.pid);
        break;
      case "output":
        h.onOutput(f.data);
        break;
      case "exited":
        exited = true;
        h.onExit?.(f);
        break;
      case "error":
        failed = true;
        h.onError?.(f.error);
        break;
    }
  };
  ws.onclose = (ev: CloseEvent) => {
    if (!exited && !failed && ev.code !== 1000) {
      const why = ev.reason ? `: ${ev.reason}` : "";
      h.onError?.(
        new ApiError("UNAVAILABLE", `The terminal's connection closed (code ${ev.code}${why}) before its process ended.`),
      );
    }
    h.onClose?.({ code: ev.code, reason: ev.reason, exited });
  };
  ws.onerror = () => {
    /* the close that follows says what happened */
  };
  const live = () => opened && ws.readyState === OPEN;
  return {
    send: (data) => {
      if (live()) ws.send(inputBytes(data));
    },
    sendBinary: (data) => {
      if (live()) ws.send(binaryBytes(data));
    },
    resize: (s) => {
      const next = checkSize(s);
      if (next.cols === current.cols && next.rows === current.rows) return;
      current = next;
      if (live()) ws.send(resizeFrame(current));
    },
    close: () => ws.close(1000, "closed by the console"),
    get pid() {
      return pid;
    },
  };
}

/** A real WebSocket to a sandbox's PTY, from this page's origin. */
export function browserSocket(sandboxId: string): () => SocketLike {
  return () => new WebSocket(ptyUrl(window.location, sandboxId), [PROTOCOL]) as unknown as SocketLike;
}
