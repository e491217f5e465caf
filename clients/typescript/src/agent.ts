/**
 * Agent runs: a command given a prompt, whose numbered events can be
 * replayed, so a dropped stream reattaches without losing any.
 */
import { TalonError, errorFrom } from "./errors.js";
import type { Sandbox } from "./sandbox.js";
import { enc, ndjson, seconds } from "./transport.js";

/** One event of an agent run, numbered from 1. */
export type AgentEvent =
  | { kind: "started"; seq: number; pid: number; runId: string }
  | { kind: "output"; seq: number; stream: "stdout" | "stderr"; text: string }
  | { kind: "fileChange"; seq: number; path: string; change: string }
  | { kind: "completed"; seq: number; exitCode: number; timedOut: boolean; durationMs: number };

/** A completed agent run. */
export interface AgentRun {
  runId: string;
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
  events: AgentEvent[];
}

export interface AgentOptions {
  prompt?: string;
  envs?: Record<string, string>;
  cwd?: string;
  user?: string;
  /** Names of tenant secrets given as environment variables (redacted from every event). */
  secrets?: string[];
  timeoutMs?: number;
  onEvent?: (e: AgentEvent) => void | Promise<void>;
  /** Reattaches this many times when the stream drops (3). */
  reattach?: number;
}

function agentEvent(line: Record<string, unknown>): AgentEvent | undefined {
  if (line.error) throw errorFrom(0, line.error);
  const e = ((line.event as Record<string, unknown>) ?? line) as Record<string, any>;
  const seq = Number(e.seq ?? 0);
  if (e.started) return { kind: "started", seq, pid: Number(e.started.pid ?? 0), runId: String(e.started.runId ?? "") };
  if (e.output) {
    const stream = e.output.stream === "OUTPUT_STREAM_STDERR" ? "stderr" : "stdout";
    return { kind: "output", seq, stream, text: String(e.output.text ?? "") };
  }
  if (e.fileChange) {
    const change = String(e.fileChange.kind ?? "").replace("FILE_EVENT_TYPE_", "").toLowerCase();
    return { kind: "fileChange", seq, path: String(e.fileChange.path ?? ""), change };
  }
  if (e.completed) {
    const c = e.completed;
    return {
      kind: "completed",
      seq,
      exitCode: Number(c.exitCode ?? 0),
      timedOut: Boolean(c.timedOut),
      durationMs: parseFloat(String(c.duration ?? "0s")) * 1000,
    };
  }
  return undefined;
}

/** Agent runs: a command given a prompt on stdin; runs outlive the stream. */
export class Agent {
  constructor(private readonly s: Sandbox) {}

  private runPath(runId: string, verb: string): string {
    return `${this.s.path}/agent-runs/${enc(runId)}${verb}`;
  }

  private async follow(resp: Response, st: { events: AgentEvent[]; last: number; runId: string; done?: AgentEvent }, onEvent?: AgentOptions["onEvent"]) {
    for await (const line of ndjson(resp)) {
      const e = agentEvent(line);
      if (!e || (e.seq && e.seq <= st.last)) continue;
      st.last = e.seq || st.last;
      if (e.kind === "started") st.runId = e.runId;
      if (e.kind === "completed") st.done = e;
      st.events.push(e);
      await onEvent?.(e);
    }
  }

  private result(st: { events: AgentEvent[]; runId: string; done?: AgentEvent }): AgentRun {
    const d = st.done;
    if (!d || d.kind !== "completed") throw new TalonError(`agent run ${st.runId} ended without completing`);
    return { runId: st.runId, exitCode: d.exitCode, timedOut: d.timedOut, durationMs: d.durationMs, events: st.events };
  }

  /** Runs `command` (a shell line, or argv) until it ends; a non-zero exit is not an error. */
  async run(command: string | string[], o: AgentOptions = {}): Promise<AgentRun> {
    const body: Record<string, unknown> = {
      command: typeof command === "string" ? ["/bin/bash", "-lc", command] : command,
      prompt: o.prompt ?? "",
    };
    if (o.envs) body.env = o.envs;
    if (o.cwd) body.cwd = o.cwd;
    if (o.user) body.user = o.user;
    if (o.secrets?.length) body.secretNames = o.secrets;
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
    const st: { events: AgentEvent[]; last: number; runId: string; done?: AgentEvent } = { events: [], last: 0, runId: "" };
    try {
      const resp = await this.s.conn.fetch(`${this.s.path}/agent:run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await this.follow(resp, st, o.onEvent);
    } catch (e) {
      if (!st.runId || e instanceof TalonError) throw e;
    }
    for (let tries = 0; !st.done && st.runId && tries < (o.reattach ?? 3); tries++) {
      try {
        const resp = await this.s.conn.fetch(`${this.runPath(st.runId, ":connect")}?afterSeq=${st.last}`);
        await this.follow(resp, st, o.onEvent);
      } catch (e) {
        if (e instanceof TalonError) throw e;
      }
    }
    return this.result(st);
  }

  /** Follows a run by id from after `afterSeq` until it completes. */
  async connect(runId: string, o: { afterSeq?: number; onEvent?: AgentOptions["onEvent"] } = {}): Promise<AgentRun> {
    const st: { events: AgentEvent[]; last: number; runId: string; done?: AgentEvent } = { events: [], last: o.afterSeq ?? 0, runId };
    const resp = await this.s.conn.fetch(`${this.runPath(runId, ":connect")}?afterSeq=${st.last}`);
    await this.follow(resp, st, o.onEvent);
    return this.result(st);
  }

  /** Kills a run's process tree; the run then completes. */
  async cancel(runId: string): Promise<void> {
    await this.s.conn.fetch(this.runPath(runId, ":cancel"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
  }
}
