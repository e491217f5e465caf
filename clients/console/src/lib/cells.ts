/**
 * A notebook cell's output, built from RunCode's events: text in order
 * (stdout and stderr), rich results reduced to one safe way of showing
 * each, the error with its traceback (ANSI colours stripped), and how the
 * run ended. What a sandbox sends is untrusted: images are shown only
 * from base64 data as an <img>, HTML only in a sandboxed frame with no
 * scripts and an opaque origin (never in the console's page), and
 * everything else as text.
 */
import type { CodeEvent } from "../api/code";

export type Rich =
  | { kind: "image"; mime: string; src: string }
  | { kind: "html"; html: string; text: string }
  | { kind: "json"; text: string }
  | { kind: "text"; text: string };

export type CellItem =
  | { kind: "stream"; stream: "stdout" | "stderr"; text: string }
  | { kind: "result"; main: boolean; rich: Rich }
  | { kind: "error"; name: string; value: string; traceback: string };

export interface CellOutput {
  items: CellItem[];
  done?: { executionCount: number; duration: string; interrupted: boolean; timedOut: boolean };
}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** Text without terminal colour codes (tracebacks carry them). */
export function stripAnsi(s: string): string {
  return s.replace(ANSI, "");
}

function utf8ToBase64(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The one way a result's representations are shown: images first, then HTML, JSON, text. */
export function pickRich(data: Record<string, string>): Rich {
  for (const mime of IMAGE_TYPES) {
    const v = data[mime];
    if (v && BASE64.test(v)) return { kind: "image", mime, src: `data:${mime};base64,${v.replace(/\s/g, "")}` };
  }
  const svg = data["image/svg+xml"];
  if (svg) return { kind: "image", mime: "image/svg+xml", src: `data:image/svg+xml;base64,${utf8ToBase64(svg)}` };
  const text = data["text/plain"] ?? "";
  if (data["text/html"]) return { kind: "html", html: data["text/html"], text };
  if (data["application/json"] !== undefined) {
    let pretty = data["application/json"];
    try {
      pretty = JSON.stringify(JSON.parse(pretty), null, 2);
    } catch {
      /* shown as sent */
    }
    return { kind: "json", text: pretty };
  }
  if (text) return { kind: "text", text };
  const first = Object.entries(data)[0];
  return { kind: "text", text: first ? `(${first[0]}, ${first[1].length} characters: not shown)` : "" };
}

/** The srcdoc of a sandboxed frame showing a result's HTML: no script runs in it (sandbox without allow-scripts). */
export function htmlFrameDoc(html: string): string {
  return `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'"><style>body{font:14px system-ui,sans-serif;margin:8px;color:#222;background:#fff}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}</style>${html}`;
}

/** Applies one event to a cell's output (a new object: Svelte sees the change). */
export function applyCodeEvent(out: CellOutput, ev: CodeEvent): CellOutput {
  const items = out.items.slice();
  const stream = (s: "stdout" | "stderr", text: string) => {
    if (!text) return;
    const last = items[items.length - 1];
    if (last && last.kind === "stream" && last.stream === s) items[items.length - 1] = { ...last, text: last.text + text };
    else items.push({ kind: "stream", stream: s, text });
  };
  if (ev.stdout) stream("stdout", ev.stdout.text ?? "");
  else if (ev.stderr) stream("stderr", ev.stderr.text ?? "");
  else if (ev.result) items.push({ kind: "result", main: !!ev.result.isMainResult, rich: pickRich(ev.result.data ?? {}) });
  else if (ev.codeError)
    items.push({
      kind: "error",
      name: ev.codeError.name ?? "Error",
      value: ev.codeError.value ?? "",
      traceback: stripAnsi((ev.codeError.traceback ?? []).join("\n")),
    });
  else if (ev.completed)
    return {
      items,
      done: {
        executionCount: ev.completed.executionCount ?? 0,
        duration: ev.completed.duration ?? "",
        interrupted: !!ev.completed.interrupted,
        timedOut: !!ev.completed.timedOut,
      },
    };
  return { ...out, items };
}

/** How a run ended, in words. */
export function cellSummary(o: CellOutput): string {
  if (!o.done) return "running";
  const took = o.done.duration ? ` in ${o.done.duration}` : "";
  if (o.done.timedOut) return `timed out${took}`;
  if (o.done.interrupted) return `interrupted${took}`;
  const failed = o.items.some((i) => i.kind === "error");
  return `${failed ? "failed" : "done"}${took}`;
}
