import { describe, expect, it } from "vitest";
import { ApiError } from "./errors";
import { LineSplitter, messages, parseLine, readNdjson } from "./ndjson";

function body(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === "string" ? enc.encode(ch) : ch);
      c.close();
    },
  });
}

async function all(s: AsyncIterable<Record<string, unknown>>) {
  const out: Record<string, unknown>[] = [];
  for await (const m of s) out.push(m);
  return out;
}

describe("LineSplitter", () => {
  it("cuts lines across chunks, drops blank lines and \\r", () => {
    const s = new LineSplitter();
    expect(s.push('{"a":1}\n{"b"')).toEqual(['{"a":1}']);
    expect(s.push(':2}\r\n\n  \n{"c":3}')).toEqual(['{"b":2}']);
    expect(s.end()).toEqual(['{"c":3}']);
    expect(s.end()).toEqual([]);
  });
});

describe("readNdjson", () => {
  it("yields each message, also a last line without a newline", async () => {
    const got = await all(readNdjson(body(['{"n":1}\n{"n":', '2}\n{"n":3}'])));
    expect(got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it("decodes UTF-8 split inside a character", async () => {
    const bytes = new TextEncoder().encode('{"s":"héllo ✓"}\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside "é"
    const tick = bytes.indexOf(0xe2) + 2; // inside "✓"
    const got = await all(readNdjson(body([bytes.slice(0, cut), bytes.slice(cut, tick), bytes.slice(tick)])));
    expect(got).toEqual([{ s: "héllo ✓" }]);
  });

  it("throws an error line as an ApiError after the messages before it", async () => {
    const seen: unknown[] = [];
    const err = await (async () => {
      for await (const m of readNdjson(body(['{"n":1}\n{"error":{"code":15,"message":"event stream lagged; reconnect to resume"}}\n'])))
        seen.push(m);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ n: 1 }]);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("DATA_LOSS");
    expect((err as ApiError).message).toContain("lagged");
  });

  it("refuses a line that is not a JSON object", () => {
    expect(() => parseLine("not json")).toThrow(/not JSON/);
    expect(() => parseLine("[1,2]")).toThrow(/not a JSON object/);
    // A message that merely has an error field among others is a message.
    expect(parseLine('{"error":{"code":2},"event":{}}')).toEqual({ error: { code: 2 }, event: {} });
  });

  it("reads a Response's body", async () => {
    const r = new Response('{"event":{"started":{"pid":7}}}\n');
    expect(await all(messages(r))).toEqual([{ event: { started: { pid: 7 } } }]);
  });

  it("cancels the stream when the reader stops early", async () => {
    let cancelled = false;
    const s = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new TextEncoder().encode('{"n":1}\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const _ of readNdjson(s)) break;
    expect(cancelled).toBe(true);
  });
});
