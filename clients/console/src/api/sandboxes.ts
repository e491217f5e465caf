/**
 * The sandbox calls the console makes: list (paged, filtered), get,
 * create, the lifecycle actions, and running a command with its output
 * streamed.
 */
import { type Api, type Schemas, seg } from "./client";
import { messages } from "./ndjson";
import type { paths } from "../generated/schema";

export type Sandbox = Schemas["Sandbox"];
export type SandboxState = NonNullable<Sandbox["state"]>;
export type WhoAmI = Schemas["WhoAmIResponse"];
export type Role = NonNullable<WhoAmI["role"]>;

export interface ListFilter {
  /** Only these states (every state but DELETED when empty). */
  states: SandboxState[];
  /** Labels that must all match. */
  labels: Record<string, string>;
  /** Metadata pairs that must all match. */
  metadata: Record<string, string>;
}

export const emptyFilter = (): ListFilter => ({ states: [], labels: {}, metadata: {} });

export function labelSelector(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

export async function listSandboxes(
  api: Api,
  f: ListFilter,
  page: { pageSize?: number; pageToken?: string } = {},
): Promise<{ sandboxes: Sandbox[]; nextPageToken: string }> {
  const query: paths["/v1/sandboxes"]["get"]["parameters"]["query"] = {
    pageSize: page.pageSize ?? 200,
    ...(page.pageToken ? { pageToken: page.pageToken } : {}),
    ...(f.states.length ? { states: f.states } : {}),
    ...(Object.keys(f.labels).length ? { labelSelector: labelSelector(f.labels) } : {}),
    ...(Object.keys(f.metadata).length ? { metadata: f.metadata } : {}),
  };
  const r = await api.call(api.client.GET("/v1/sandboxes", { params: { query } }));
  return { sandboxes: r.sandboxes ?? [], nextPageToken: r.nextPageToken ?? "" };
}

export async function getSandbox(api: Api, id: string): Promise<Sandbox> {
  const r = await api.call(api.client.GET("/v1/sandboxes/{sandboxId}", { params: { path: { sandboxId: id } } }));
  if (!r.sandbox) throw new Error("the gateway answered without the sandbox");
  return r.sandbox;
}

export async function createSandbox(api: Api, body: Sandbox, idempotencyKey: string): Promise<Sandbox> {
  const r = await api.call(
    api.client.POST("/v1/sandboxes", { body, headers: { "Idempotency-Key": idempotencyKey } }),
  );
  if (!r.sandbox) throw new Error("the gateway answered the create without a sandbox");
  return r.sandbox;
}

export type Action = "pause" | "resume" | "stop" | "start" | "delete";

export interface ActionInfo {
  label: string;
  /** The states it is offered in. */
  from: SandboxState[];
  danger: boolean;
  confirm: string;
}

const LIVE: SandboxState[] = ["SANDBOX_STATE_RUNNING", "SANDBOX_STATE_PAUSED"];
export const ACTIONS: Record<Action, ActionInfo> = {
  pause: {
    label: "Pause",
    from: ["SANDBOX_STATE_RUNNING"],
    danger: false,
    confirm: "Its processes are frozen with their memory kept until it is resumed.",
  },
  resume: {
    label: "Resume",
    from: ["SANDBOX_STATE_PAUSED"],
    danger: false,
    confirm: "Its processes run on where they were, with its whole timeout again.",
  },
  stop: {
    label: "Stop",
    from: LIVE,
    danger: true,
    confirm: "Every process in it ends. Its workspace is kept, and it can be started again.",
  },
  start: {
    label: "Start",
    from: ["SANDBOX_STATE_STOPPED", "SANDBOX_STATE_FAILED"],
    danger: false,
    confirm: "It starts again from its workspace.",
  },
  delete: {
    label: "Delete",
    from: [
      "SANDBOX_STATE_PENDING",
      "SANDBOX_STATE_STARTING",
      "SANDBOX_STATE_RUNNING",
      "SANDBOX_STATE_PAUSED",
      "SANDBOX_STATE_STOPPING",
      "SANDBOX_STATE_STOPPED",
      "SANDBOX_STATE_FAILED",
    ],
    danger: true,
    confirm: "It is deleted with its files. This cannot be undone.",
  },
};

/** The actions that make sense in a state, in the order they are shown. */
export function actionsFor(state: SandboxState | undefined): Action[] {
  if (!state) return [];
  return (Object.keys(ACTIONS) as Action[]).filter((a) => ACTIONS[a].from.includes(state));
}

export async function runAction(api: Api, id: string, a: Action): Promise<void> {
  const path = { sandboxId: id };
  switch (a) {
    case "delete":
      await api.call(api.client.DELETE("/v1/sandboxes/{sandboxId}", { params: { path } }));
      return;
    case "pause":
      await api.call(api.client.POST("/v1/sandboxes/{sandboxId}:pause", { params: { path }, body: {} }));
      return;
    case "resume":
      await api.call(api.client.POST("/v1/sandboxes/{sandboxId}:resume", { params: { path }, body: {} }));
      return;
    case "stop":
      await api.call(api.client.POST("/v1/sandboxes/{sandboxId}:stop", { params: { path }, body: {} }));
      return;
    case "start":
      await api.call(api.client.POST("/v1/sandboxes/{sandboxId}:start", { params: { path }, body: {} }));
      return;
  }
}

export type ProcessEvent = NonNullable<Schemas["StartProcessResponse"]["event"]>;

/**
 * Runs a command and hands its events over as they come (started,
 * output chunks, exited). Aborting the signal stops following it; the
 * process runs on.
 */
export async function runCommand(
  api: Api,
  id: string,
  req: Schemas["StartProcessRequest"],
  onEvent: (e: ProcessEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const resp = await api.postStream(`/v1/sandboxes/${seg(id)}/processes`, req, signal);
  for await (const m of messages(resp)) {
    const ev = (m as Schemas["StartProcessResponse"]).event;
    if (ev) onEvent(ev);
  }
}
