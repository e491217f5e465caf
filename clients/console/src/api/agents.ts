/**
 * Agent runs (AgentService): start one (a command that reads the prompt
 * on stdin), follow its events, reattach by run id after a reload (runs
 * belong to the sandbox, not to the call), cancel. There is no list of a
 * sandbox's runs in the API, so the page keeps the ids it started in
 * sessionStorage.
 */
import { type Api, type Schemas, seg } from "./client";
import { messages } from "./ndjson";

export type AgentEvent = Schemas["RunAgentResponse"];
export type AgentRequest = Schemas["RunAgentRequest"];

export async function runAgent(
  api: Api,
  id: string,
  req: AgentRequest,
  onEvent: (e: AgentEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const resp = await api.postStream(`/v1/sandboxes/${seg(id)}/agent:run`, req, signal);
  for await (const m of messages(resp)) onEvent(m as AgentEvent);
}

export async function connectAgentRun(
  api: Api,
  id: string,
  runId: string,
  afterSeq: number,
  onEvent: (e: AgentEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const resp = await api.fetch(`/v1/sandboxes/${seg(id)}/agent-runs/${seg(runId)}:connect?afterSeq=${afterSeq}`, {
    headers: { accept: "application/x-ndjson" },
    signal,
  });
  for await (const m of messages(resp)) {
    const ev = (m as Schemas["ConnectAgentRunResponse"]).event;
    if (ev) onEvent(ev);
  }
}

export async function cancelAgentRun(api: Api, id: string, runId: string): Promise<void> {
  await api.fetch(`/v1/sandboxes/${seg(id)}/agent-runs/${seg(runId)}:cancel`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
}

/** A run as the page shows it, built from its events in order. */
export interface RunView {
  runId: string;
  pid?: number;
  lines: { stream: "stdout" | "stderr"; text: string }[];
  /** Each changed path once, with its first kind. */
  changes: { path: string; kind: string }[];
  done?: { exitCode: number; timedOut: boolean; duration: string };
  /** The last event's seq, to reattach after. */
  seq: number;
  /** Lines dropped from the start past the cap. */
  dropped: number;
}

export const emptyRun = (runId = ""): RunView => ({ runId, lines: [], changes: [], seq: 0, dropped: 0 });

const MAX_LINES = 5000;

/** Applies one event (a new object). Events at or before the last seq seen are ignored (a replay). */
export function applyAgentEvent(r: RunView, ev: AgentEvent): RunView {
  const seq = Number(ev.seq ?? 0);
  if (seq && seq <= r.seq) return r;
  const next: RunView = { ...r, seq: seq || r.seq };
  if (ev.started) {
    next.runId = ev.started.runId ?? r.runId;
    next.pid = ev.started.pid;
  } else if (ev.output) {
    const stream = ev.output.stream === "OUTPUT_STREAM_STDERR" ? "stderr" : "stdout";
    let lines = [...r.lines, { stream, text: ev.output.text ?? "" } as const];
    let dropped = r.dropped;
    if (lines.length > MAX_LINES) {
      dropped += lines.length - MAX_LINES;
      lines = lines.slice(-MAX_LINES);
    }
    next.lines = lines;
    next.dropped = dropped;
  } else if (ev.fileChange) {
    const path = ev.fileChange.path ?? "";
    if (!r.changes.some((c) => c.path === path)) {
      next.changes = [...r.changes, { path, kind: ev.fileChange.kind ?? "FILE_EVENT_TYPE_UNSPECIFIED" }];
    }
  } else if (ev.completed) {
    next.done = {
      exitCode: ev.completed.exitCode ?? 0,
      timedOut: !!ev.completed.timedOut,
      duration: ev.completed.duration ?? "",
    };
  }
  return next;
}

/** The run ids this tab started on a sandbox, newest first (at most 20). */
export function rememberedRuns(store: Pick<Storage, "getItem">, sandboxId: string): string[] {
  try {
    const v = JSON.parse(store.getItem(`talon.agentRuns.${sandboxId}`) ?? "[]");
    return Array.isArray(v) ? v.filter((x) => typeof x === "string").slice(0, 20) : [];
  } catch {
    return [];
  }
}

export function rememberRun(store: Pick<Storage, "getItem" | "setItem">, sandboxId: string, runId: string): string[] {
  const runs = [runId, ...rememberedRuns(store, sandboxId).filter((r) => r !== runId)].slice(0, 20);
  store.setItem(`talon.agentRuns.${sandboxId}`, JSON.stringify(runs));
  return runs;
}
