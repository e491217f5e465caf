/**
 * A sandbox's processes: list, reattach to one's output (by pid, or by
 * the tag it was started with, which survives a reload of the page),
 * stdin, signals, and its kept log a page at a time.
 */
import { type Api, type Schemas, seg } from "./client";
import { messages } from "./ndjson";
import type { ProcessEvent } from "./sandboxes";

export type ProcessInfo = Schemas["ProcessInfo"];
export type LogPage = Schemas["GetProcessLogsResponse"];
export type LogStream = NonNullable<Schemas["LogEntry"]["stream"]>;

/** One process: by tag when it has one (stable), else by pid. */
export type Selector = { pid: number } | { tag: string };

export function selectorOf(p: ProcessInfo): Selector {
  return p.tag ? { tag: p.tag } : { pid: p.pid ?? 0 };
}

/** The REST path of a process below the sandbox's: `processes/7` or `processes/tags/web`. */
export function processPath(sandboxId: string, s: Selector): string {
  const base = `/v1/sandboxes/${seg(sandboxId)}/processes`;
  return "tag" in s ? `${base}/tags/${seg(s.tag)}` : `${base}/${s.pid}`;
}

export function describeSelector(s: Selector): string {
  return "tag" in s ? `tag ${s.tag}` : `pid ${s.pid}`;
}

/** The signals offered, by number (as the API takes them). */
export const SIGNALS: { name: string; number: number; what: string }[] = [
  { name: "SIGINT", number: 2, what: "interrupt (Ctrl+C)" },
  { name: "SIGTERM", number: 15, what: "ask it to end" },
  { name: "SIGKILL", number: 9, what: "end it at once" },
  { name: "SIGHUP", number: 1, what: "hang up" },
  { name: "SIGSTOP", number: 19, what: "suspend" },
  { name: "SIGCONT", number: 18, what: "continue" },
];

/** Text as the base64 of its UTF-8 (bytes fields in JSON). */
export function textToBase64(text: string): string {
  let bin = "";
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin);
}

export async function listProcesses(api: Api, id: string, includeExited = true): Promise<ProcessInfo[]> {
  const r = await api.call(
    api.client.GET("/v1/sandboxes/{sandboxId}/processes", {
      params: { path: { sandboxId: id }, query: { includeExited } },
    }),
  );
  return r.processes ?? [];
}

/** Follows a process's output from `afterSeq` (0: all that is kept). */
export async function connectProcess(
  api: Api,
  id: string,
  s: Selector,
  onEvent: (e: ProcessEvent) => void,
  signal?: AbortSignal,
  afterSeq = 0,
): Promise<void> {
  const resp = await api.fetch(`${processPath(id, s)}:connect?afterSeq=${afterSeq}`, {
    headers: { accept: "application/x-ndjson" },
    signal,
  });
  for await (const m of messages(resp)) {
    const ev = (m as Schemas["ConnectProcessResponse"]).event;
    if (ev) onEvent(ev);
  }
}

async function post(api: Api, path: string, body: unknown): Promise<void> {
  await api.fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

export function sendInput(api: Api, id: string, s: Selector, text: string): Promise<void> {
  return post(api, `${processPath(id, s)}:input`, { data: textToBase64(text) });
}

export function sendSignal(api: Api, id: string, s: Selector, signal: number): Promise<void> {
  return post(api, `${processPath(id, s)}:signal`, { signal });
}

export function closeStdin(api: Api, id: string, s: Selector): Promise<void> {
  return post(api, `${processPath(id, s)}:closeStdin`, {});
}

/** One page of a process's kept log, after `afterSeq`. */
export async function getLogs(
  api: Api,
  id: string,
  s: Selector,
  page: { afterSeq: string; pageSize: number; stream?: LogStream },
): Promise<LogPage> {
  const q = new URLSearchParams({ afterSeq: page.afterSeq, pageSize: String(page.pageSize) });
  if (page.stream && page.stream !== "OUTPUT_STREAM_UNSPECIFIED") q.set("stream", page.stream);
  const resp = await api.fetch(`${processPath(id, s)}/logs?${q}`, { headers: { accept: "application/json" } });
  return (await resp.json()) as LogPage;
}
