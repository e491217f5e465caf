/**
 * Snapshots and forks of a sandbox: take one (its files; memory is not
 * kept; its progress streamed), list a sandbox's, start a new sandbox from one, fork the sandbox
 * (a snapshot taken now and `count` sandboxes from it), delete one.
 */
import type { Api, Schemas } from "./client";
import { messages } from "./ndjson";
import type { Sandbox } from "./sandboxes";

export type Snapshot = Schemas["Snapshot"];
export type SnapshotStep = Schemas["TakeSnapshotResponse"];

/**
 * Takes a snapshot, telling `onStep` how far the copy has got as it goes
 * (TakeSnapshot's stream); the snapshot, from its last message.
 */
export async function takeSnapshot(
  api: Api,
  id: string,
  name: string,
  onStep: (s: SnapshotStep) => void,
  signal?: AbortSignal,
): Promise<Snapshot> {
  const resp = await api.postStream(`/v1/sandboxes/${encodeURIComponent(id)}/snapshots:take`, name ? { name } : {}, signal);
  for await (const m of messages(resp)) {
    const step = m as SnapshotStep;
    onStep(step);
    if (step.snapshot) return step.snapshot;
  }
  throw new Error("the snapshot's stream ended without the snapshot");
}

/** The snapshots of one sandbox, newest first (every page). */
export async function listSnapshots(api: Api, sandboxId: string): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  let pageToken = "";
  for (let i = 0; i < 20; i++) {
    const r = await api.call(
      api.client.GET("/v1/snapshots", {
        params: { query: { sandboxId, pageSize: 500, ...(pageToken ? { pageToken } : {}) } },
      }),
    );
    out.push(...(r.snapshots ?? []));
    pageToken = r.nextPageToken ?? "";
    if (!pageToken) break;
  }
  return out;
}

export async function deleteSnapshot(api: Api, snapshotId: string): Promise<void> {
  await api.call(api.client.DELETE("/v1/snapshots/{snapshotId}", { params: { path: { snapshotId } } }));
}

/** Forks the sandbox `count` times; answers once every fork runs. */
export async function forkSandbox(api: Api, id: string, count: number): Promise<Sandbox[]> {
  const r = await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}:fork", { params: { path: { sandboxId: id } }, body: { count } }),
  );
  return r.sandboxes ?? [];
}

/** The body of a create from a snapshot: its files, on the image it was taken from (no `image`). */
export const fromSnapshot = (snapshotId: string): Sandbox => ({ snapshotId });
