/**
 * Server streams over REST are NDJSON: one JSON message per line. A
 * stream that fails after its first message ends with a line
 * `{"error": {...}}`, which the reader throws as an ApiError.
 */
import { errorFromBody } from "./errors";

/**
 * Cuts text into lines as it arrives. Chunks may end anywhere, also
 * inside a line; a line's `\r\n` and blank lines are dropped.
 */
export class LineSplitter {
  private buf = "";

  push(chunk: string): string[] {
    this.buf += chunk;
    const lines: string[] = [];
    let nl: number;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.slice(0, nl).replace(/\r$/, "");
      this.buf = this.buf.slice(nl + 1);
      if (line.trim()) lines.push(line);
    }
    return lines;
  }

  /** What is left at the end of the stream (a last line without `\n`). */
  end(): string[] {
    const rest = this.buf.trim();
    this.buf = "";
    return rest ? [rest] : [];
  }
}

/** One line's message; an `{"error"}` line is thrown. */
export function parseLine(line: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new Error(`the stream sent a line that is not JSON: ${line.slice(0, 120)}`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    throw new Error(`the stream sent a line that is not a JSON object: ${line.slice(0, 120)}`);
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === "error" && o.error && typeof o.error === "object") {
    throw errorFromBody(0, o.error);
  }
  return o;
}

/**
 * The messages of an NDJSON body, as they arrive. Bytes are decoded as
 * UTF-8 across chunk boundaries.
 */
export async function* readNdjson(body: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  const lines = new LineSplitter();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const l of lines.push(dec.decode(value, { stream: true }))) yield parseLine(l);
    }
    for (const l of lines.push(dec.decode())) yield parseLine(l);
    for (const l of lines.end()) yield parseLine(l);
    finished = true;
  } finally {
    // A reader that stops early (an error line, a break) closes the stream.
    if (!finished) reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The messages of a streamed response. */
export function messages(resp: Response): AsyncGenerator<Record<string, unknown>> {
  if (!resp.body) throw new Error("the stream has no body");
  return readNdjson(resp.body);
}
