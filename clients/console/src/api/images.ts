/**
 * The image catalogue: list (everyone), and for platform admins import
 * (from a path on the workers, or an archive uploaded from the browser
 * with its progress), prewarm (its per-worker progress streamed) and
 * delete.
 */
import { CSRF_HEADER, type Api, type Schemas, seg } from "./client";
import { errorFromResponse } from "./errors";
import { messages } from "./ndjson";

export type Image = Schemas["Image"];
export type PrewarmEvent = Schemas["PrewarmImageResponse"];

/** Image names: 1 to 128 of a-z, 0-9, and . _ - : / (as references are). */
const NAME = /^[a-z0-9][a-z0-9._:/-]{0,127}$/;

export function imageNameError(name: string): string {
  if (!name) return "Enter a name.";
  return NAME.test(name) ? "" : "A name is 1 to 128 of a-z, 0-9, '.', '_', '-', ':' and '/', starting with a letter or digit.";
}

export async function listImages(api: Api): Promise<Image[]> {
  const r = await api.call(api.client.GET("/v1/images"));
  return r.images ?? [];
}

export async function deleteImage(api: Api, name: string): Promise<void> {
  await api.call(api.client.DELETE("/v1/images/{name}", { params: { path: { name } } }));
}

/** Imports an archive that is already on the workers' hosts. */
export async function importFromPath(api: Api, name: string, sourcePath: string): Promise<Image> {
  const resp = await api.fetch("/v1/images:import", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ header: { name, sourcePath } }),
  });
  return ((await resp.json()) as Schemas["ImportImageResponse"]).image ?? { name };
}

const CHUNK = 1 << 20;

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * The NDJSON body of an upload: the header, then the file in 1 MiB
 * chunks (base64 in JSON, as bytes fields are). Built as a Blob, so the
 * browser reports the upload's progress.
 */
export async function importBody(name: string, file: Blob, onRead?: (done: number) => void): Promise<Blob> {
  const parts: BlobPart[] = [`${JSON.stringify({ header: { name } })}\n`];
  for (let off = 0; off < file.size; off += CHUNK) {
    const bytes = new Uint8Array(await file.slice(off, off + CHUNK).arrayBuffer());
    parts.push(`${JSON.stringify({ data: base64(bytes) })}\n`);
    onRead?.(Math.min(file.size, off + CHUNK));
  }
  return new Blob(parts, { type: "application/x-ndjson" });
}

/**
 * Uploads an archive (OCI layout or `docker save` tarball) with its
 * progress: XMLHttpRequest, as fetch reports none for uploads.
 */
export function uploadImage(
  api: Api,
  body: Blob,
  onProgress: (sent: number, total: number) => void,
  signal?: AbortSignal,
): Promise<Image> {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open("POST", `${api.baseUrl}/v1/images:import`);
    x.setRequestHeader("content-type", "application/x-ndjson");
    const token = api.csrf.get();
    if (token) x.setRequestHeader(CSRF_HEADER, token);
    x.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    x.onerror = () => reject(new Error("the upload failed: the gateway could not be reached"));
    x.onabort = () => reject(new DOMException("aborted", "AbortError"));
    x.onload = async () => {
      const resp = new Response(x.responseText, { status: x.status, headers: { "content-type": "application/json" } });
      if (x.status < 200 || x.status > 299) return reject(await errorFromResponse(resp));
      resolve(((await resp.json()) as Schemas["ImportImageResponse"]).image ?? {});
    };
    signal?.addEventListener("abort", () => x.abort());
    x.send(body);
  });
}

/** Prewarms an image; each worker's progress as it comes. */
export async function prewarmImage(
  api: Api,
  name: string,
  poolSize: number,
  onEvent: (e: PrewarmEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const resp = await api.postStream(`/v1/images/${seg(name)}:prewarm`, { poolSize }, signal);
  for await (const m of messages(resp)) onEvent(m as PrewarmEvent);
}

/** Each worker's latest prewarm state, by worker. */
export function prewarmState(
  prev: Record<string, PrewarmEvent>,
  ev: PrewarmEvent,
): Record<string, PrewarmEvent> {
  const id = ev.workerId || "(all)";
  return { ...prev, [id]: { ...prev[id], ...ev } };
}

/** A worker's progress as a fraction (0 to 1), or null when its size is unknown. */
export function fraction(ev: PrewarmEvent): number | null {
  const total = Number(ev.bytesTotal ?? 0);
  if (!total) return null;
  return Math.min(1, Number(ev.bytesDone ?? 0) / total);
}
