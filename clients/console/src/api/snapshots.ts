/**
 * Snapshots and forks of a sandbox: take one (its files; memory is not
 * kept), list a sandbox's, start a new sandbox from one, fork the sandbox
 * (a snapshot taken now and `count` sandboxes from it), delete one.
 */
import type { Api, Schemas } from "./client";
import type { Sandbox } from "./sandboxes";

export type Snapshot = Schemas["Snapshot"];

export async function createSnapshot(api: Api, id: string, name: string): Promise<Snapshot> {
  const r = await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/snapshots", { params: { path: { sandboxId: id } }, body: name ? { name } : {} }),
  );
  if (!r.snapshot) throw new Error("the gateway answered without the snapshot");
  return r.snapshot;
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
