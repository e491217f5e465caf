/**
 * A command's output as it streams: base64 chunks per stream, decoded as
 * UTF-8 across chunk boundaries (a chunk may end inside a character),
 * kept as a list of segments so stdout and stderr stay in order. The
 * oldest text is dropped past `maxChars`, so a chatty process cannot
 * slow the page down.
 */
import type { ProcessEvent } from "../api/sandboxes";

export type Stream = "stdout" | "stderr";
export interface Segment {
  stream: Stream;
  text: string;
}

export function base64ToBytes(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

export class OutputLog {
  segments: Segment[] = [];
  pid: number | undefined;
  exit: { exitCode: number; signal: number; timedOut: boolean } | undefined;
  /** Characters dropped from the start. */
  dropped = 0;
  private size = 0;
  private readonly dec: Record<Stream, TextDecoder> = {
    stdout: new TextDecoder(),
    stderr: new TextDecoder(),
  };

  constructor(readonly maxChars = 1 << 20) {}

  /** Applies one event; true if anything visible changed. */
  apply(ev: ProcessEvent): boolean {
    if (ev.started) {
      this.pid = ev.started.pid;
      return true;
    }
    if (ev.output) {
      const stream: Stream = ev.output.stream === "OUTPUT_STREAM_STDERR" ? "stderr" : "stdout";
      const text = this.dec[stream].decode(base64ToBytes(ev.output.data ?? ""), { stream: true });
      this.append(stream, text);
      return text.length > 0;
    }
    if (ev.exited) {
      for (const s of ["stdout", "stderr"] as const) this.append(s, this.dec[s].decode());
      this.exit = {
        exitCode: ev.exited.exitCode ?? 0,
        signal: ev.exited.signal ?? 0,
        timedOut: ev.exited.timedOut ?? false,
      };
      return true;
    }
    return false;
  }

  private append(stream: Stream, text: string) {
    if (!text) return;
    const last = this.segments[this.segments.length - 1];
    if (last && last.stream === stream) last.text += text;
    else this.segments.push({ stream, text });
    this.size += text.length;
    while (this.size > this.maxChars && this.segments.length) {
      const first = this.segments[0];
      const over = this.size - this.maxChars;
      if (first.text.length <= over) {
        this.segments.shift();
        this.size -= first.text.length;
        this.dropped += first.text.length;
      } else {
        first.text = first.text.slice(over);
        this.size -= over;
        this.dropped += over;
      }
    }
  }

  /** One stream's whole text (what is still kept). */
  text(stream: Stream): string {
    return this.segments
      .filter((s) => s.stream === stream)
      .map((s) => s.text)
      .join("");
  }
}

/** How a process ended, in words. */
export function exitSummary(e: { exitCode: number; signal: number; timedOut: boolean }): string {
  if (e.timedOut) return `killed after its timeout${e.signal ? ` (signal ${e.signal})` : ""}`;
  if (e.signal) return `killed by signal ${e.signal}`;
  return `exit code ${e.exitCode}`;
}
