/**
 * A sandbox's files over REST: list, read (raw bytes), write, upload
 * with progress, download as a file save, rename, remove, make a
 * directory. Reads and writes use the raw octet-stream framing, so bytes
 * are never base64'd in the browser. Uploads go through XMLHttpRequest,
 * the one browser API that reports upload progress over HTTP/1.1; it
 * sends the CSRF token as every other change does (client.ts).
 */
import { type Api, CSRF_HEADER, seg } from "./client";
import { ApiError, errorFromBody } from "./errors";
import type { FileEntry } from "../lib/files";

const filesPath = (id: string, op: string) => `/v1/sandboxes/${seg(id)}/files:${op}`;

export async function listDir(api: Api, id: string, path: string): Promise<FileEntry[]> {
  const r = await api.call(
    api.client.GET("/v1/sandboxes/{sandboxId}/files:list", { params: { path: { sandboxId: id }, query: { path, depth: 1 } } }),
  );
  return r.entries ?? [];
}

export async function stat(api: Api, id: string, path: string): Promise<FileEntry> {
  const r = await api.call(
    api.client.GET("/v1/sandboxes/{sandboxId}/files:stat", { params: { path: { sandboxId: id }, query: { path } } }),
  );
  return r.info ?? {};
}

/** A file's bytes (at most `length` of them when given). */
export async function readBytes(api: Api, id: string, path: string, length?: number): Promise<Uint8Array> {
  const q = new URLSearchParams({ path });
  if (length) q.set("length", String(length));
  const resp = await api.fetch(`${filesPath(id, "read")}?${q}`, { headers: { accept: "application/octet-stream" } });
  return new Uint8Array(await resp.arrayBuffer());
}

/** Replaces a file (atomically, on the agent) with `data`. */
export async function writeFile(api: Api, id: string, path: string, data: string | Blob | Uint8Array): Promise<FileEntry> {
  const resp = await api.fetch(`${filesPath(id, "write")}?${new URLSearchParams({ path })}`, {
    method: "POST",
    headers: { "content-type": "application/octet-stream" },
    body: data as BodyInit,
  });
  return ((await resp.json()) as { info?: FileEntry }).info ?? {};
}

/** The parts of XMLHttpRequest an upload uses (a fake one in tests). */
export type Xhr = Pick<
  XMLHttpRequest,
  "open" | "setRequestHeader" | "send" | "abort" | "status" | "responseText" | "getResponseHeader" | "withCredentials"
> & {
  upload: { onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null };
  onload: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
};

/**
 * Uploads a file's bytes to `path`, reporting progress (bytes sent, of
 * the total) as it goes. Aborting the signal cancels it: the gateway
 * then sends no finish, so no short file is left behind.
 */
export function uploadFile(
  api: Api,
  id: string,
  path: string,
  file: Blob,
  o: { onProgress?: (loaded: number, total: number) => void; signal?: AbortSignal; xhr?: () => Xhr } = {},
): Promise<FileEntry> {
  return new Promise((resolve, reject) => {
    const x = o.xhr ? o.xhr() : (new XMLHttpRequest() as unknown as Xhr);
    const url = `${api.baseUrl}${filesPath(id, "write")}?${new URLSearchParams({ path })}`;
    x.open("POST", url);
    x.withCredentials = true;
    x.setRequestHeader("content-type", "application/octet-stream");
    const token = api.csrf.get();
    if (token) x.setRequestHeader(CSRF_HEADER, token);
    x.upload.onprogress = (e) => o.onProgress?.(e.loaded, e.lengthComputable ? e.total : file.size);
    x.onload = () => {
      let body: unknown = x.responseText;
      try {
        body = JSON.parse(x.responseText);
      } catch {
        /* a proxy's page: the status says enough */
      }
      if (x.status >= 200 && x.status < 300) {
        o.onProgress?.(file.size, file.size);
        resolve(((body as { info?: FileEntry }) ?? {}).info ?? {});
      } else {
        reject(errorFromBody(x.status, body, x.getResponseHeader("x-request-id") ?? undefined));
      }
    };
    x.onerror = () =>
      reject(new ApiError("UNAVAILABLE", "The upload could not reach the gateway. Check your connection and try again."));
    x.onabort = () => reject(new DOMException("The upload was cancelled.", "AbortError"));
    if (o.signal) {
      if (o.signal.aborted) {
        reject(new DOMException("The upload was cancelled.", "AbortError"));
        return;
      }
      o.signal.addEventListener("abort", () => x.abort(), { once: true });
    }
    x.send(file);
  });
}

/**
 * Downloads a file as a save: its bytes are fetched with this session,
 * then handed to the browser through a blob URL and a link with
 * `download` (a signed URL would need a change call, CreateFileUrl,
 * which a viewer may not make).
 */
export async function downloadFile(api: Api, id: string, path: string, name: string): Promise<number> {
  const resp = await api.fetch(`${filesPath(id, "read")}?${new URLSearchParams({ path })}`, {
    headers: { accept: "application/octet-stream" },
  });
  const blob = await resp.blob();
  const url = URL.createObjectURL(blob);
  try {
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.rel = "noopener";
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    // The click has started the download; give the browser a moment to take the blob.
    setTimeout(() => URL.revokeObjectURL(url), 30_000);
  }
  return blob.size;
}

export async function movePath(api: Api, id: string, from: string, to: string): Promise<void> {
  await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/files:move", {
      params: { path: { sandboxId: id } },
      body: { sourcePath: from, destinationPath: to, overwrite: false },
    }),
  );
}

export async function removePath(api: Api, id: string, path: string, recursive: boolean): Promise<void> {
  await api.call(
    api.client.DELETE("/v1/sandboxes/{sandboxId}/files", { params: { path: { sandboxId: id }, query: { path, recursive } } }),
  );
}

export async function makeDir(api: Api, id: string, path: string): Promise<void> {
  await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/files:mkdir", {
      params: { path: { sandboxId: id } },
      body: { path, parents: false },
    }),
  );
}
