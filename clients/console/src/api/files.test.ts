import { describe, expect, it } from "vitest";
import { Api, CSRF_HEADER, memoryTokens } from "./client";
import { ApiError } from "./errors";
import { listDir, makeDir, movePath, readBytes, removePath, uploadFile, writeFile, type Xhr } from "./files";
import { createPreviewLink, listPorts } from "./previews";
import { forkSandbox, listSnapshots } from "./snapshots";
import { updateNetworkPolicy } from "./network";

const BASE = "http://talon.test";
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function setup(answer: (req: Request) => Response | Promise<Response>) {
  const seen: Request[] = [];
  const api = new Api({
    baseUrl: BASE,
    csrf: memoryTokens("tok-1"),
    fetch: async (req) => {
      seen.push(req);
      return answer(req);
    },
  });
  return { api, seen };
}

/** A stand-in XMLHttpRequest that records what it was asked and answers as told. */
class FakeXhr {
  static last: FakeXhr;
  method = "";
  url = "";
  headers: Record<string, string> = {};
  body: unknown;
  status = 0;
  responseText = "";
  withCredentials = false;
  aborted = false;
  upload: Xhr["upload"] = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  constructor() {
    FakeXhr.last = this;
  }
  open(m: string, u: string) {
    this.method = m;
    this.url = u;
  }
  setRequestHeader(k: string, v: string) {
    this.headers[k.toLowerCase()] = v;
  }
  getResponseHeader() {
    return "req-9";
  }
  send(body: unknown) {
    this.body = body;
  }
  abort() {
    this.aborted = true;
    this.onabort?.();
  }
  answer(status: number, body: unknown) {
    this.status = status;
    this.responseText = typeof body === "string" ? body : JSON.stringify(body);
    this.onload?.();
  }
}
const fakeXhr = () => new FakeXhr() as unknown as Xhr;

describe("files", () => {
  it("lists a directory and reads raw bytes", async () => {
    const { api, seen } = setup((req) =>
      req.url.includes("files:list") ? json(200, { entries: [{ name: "a", path: "/workspace/a" }] }) : new Response("hey"),
    );
    expect(await listDir(api, "sbx_1", "/workspace")).toEqual([{ name: "a", path: "/workspace/a" }]);
    expect(new URL(seen[0].url).searchParams.get("path")).toBe("/workspace");
    expect(new TextDecoder().decode(await readBytes(api, "sbx_1", "/workspace/a b", 10))).toBe("hey");
    const u = new URL(seen[1].url);
    expect(u.pathname).toBe("/v1/sandboxes/sbx_1/files:read");
    expect(u.searchParams.get("path")).toBe("/workspace/a b");
    expect(u.searchParams.get("length")).toBe("10");
    expect(seen[1].headers.get("accept")).toBe("application/octet-stream");
  });

  it("writes raw bytes with the CSRF token", async () => {
    const { api, seen } = setup(() => json(200, { info: { path: "/workspace/a", size: "3" } }));
    expect(await writeFile(api, "sbx_1", "/workspace/a", "new")).toEqual({ path: "/workspace/a", size: "3" });
    expect(seen[0].method).toBe("POST");
    expect(seen[0].headers.get(CSRF_HEADER)).toBe("tok-1");
    expect(seen[0].headers.get("content-type")).toBe("application/octet-stream");
    expect(await seen[0].text()).toBe("new");
  });

  it("moves, removes and makes directories with the API's fields", async () => {
    const { api, seen } = setup(() => json(200, {}));
    await movePath(api, "sbx_1", "/w/a", "/w/b");
    await removePath(api, "sbx_1", "/w/d", true);
    await makeDir(api, "sbx_1", "/w/n");
    expect(await seen[0].json()).toEqual({ sourcePath: "/w/a", destinationPath: "/w/b", overwrite: false });
    expect(seen[1].method).toBe("DELETE");
    expect(new URL(seen[1].url).search).toBe("?path=%2Fw%2Fd&recursive=true");
    expect(await seen[2].json()).toEqual({ path: "/w/n", parents: false });
    for (const r of seen) expect(r.headers.get(CSRF_HEADER)).toBe("tok-1");
  });

  it("uploads with progress and the CSRF token", async () => {
    const { api } = setup(() => json(500, {}));
    const progress: [number, number][] = [];
    const blob = new Blob(["0123456789"]);
    const p = uploadFile(api, "sbx_1", "/workspace/up load.bin", blob, { xhr: fakeXhr, onProgress: (a, b) => progress.push([a, b]) });
    const x = FakeXhr.last;
    expect(x.method).toBe("POST");
    expect(x.url).toBe(`${BASE}/v1/sandboxes/sbx_1/files:write?path=%2Fworkspace%2Fup+load.bin`);
    expect(x.headers[CSRF_HEADER.toLowerCase()]).toBe("tok-1");
    expect(x.headers["content-type"]).toBe("application/octet-stream");
    expect(x.body).toBe(blob);
    x.upload.onprogress?.({ loaded: 4, total: 10, lengthComputable: true });
    x.answer(200, { info: { path: "/workspace/up load.bin", size: "10" } });
    expect(await p).toEqual({ path: "/workspace/up load.bin", size: "10" });
    expect(progress).toEqual([
      [4, 10],
      [10, 10],
    ]);
  });

  it("turns a refused upload into a readable error, and can be cancelled", async () => {
    const { api } = setup(() => json(500, {}));
    const p = uploadFile(api, "sbx_1", "/w/a", new Blob(["x"]), { xhr: fakeXhr });
    FakeXhr.last.answer(400, { code: 9, message: "sandbox sbx_1 is paused" });
    const e = await p.catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe("FAILED_PRECONDITION");
    expect(e.message).toBe("sandbox sbx_1 is paused");
    expect(e.requestId).toBe("req-9");

    const proxy = uploadFile(api, "sbx_1", "/w/a", new Blob(["x"]), { xhr: fakeXhr });
    FakeXhr.last.answer(413, "<html><h1>413 Request Entity Too Large</h1></html>");
    expect((await proxy.catch((x) => x)).message).toBe("HTTP 413: 413 Request Entity Too Large");

    const ctl = new AbortController();
    const cancelled = uploadFile(api, "sbx_1", "/w/a", new Blob(["x"]), { xhr: fakeXhr, signal: ctl.signal });
    ctl.abort();
    expect(FakeXhr.last.aborted).toBe(true);
    expect((await cancelled.catch((x) => x)).name).toBe("AbortError");

    const lost = uploadFile(api, "sbx_1", "/w/a", new Blob(["x"]), { xhr: fakeXhr });
    FakeXhr.last.onerror?.();
    expect((await lost.catch((x) => x)).code).toBe("UNAVAILABLE");
  });
});

describe("previews, snapshots, network", () => {
  it("lists each port once, in order", async () => {
    const { api } = setup(() =>
      json(200, {
        ports: [
          { port: 8000, protocol: "tcp6" },
          { port: 3000, protocol: "tcp" },
          { port: 8000, protocol: "tcp" },
        ],
      }),
    );
    expect((await listPorts(api, "sbx_1")).map((p) => p.port)).toEqual([3000, 8000]);
  });

  it("asks for a preview link with a lifetime", async () => {
    const { api, seen } = setup(() => json(200, { url: "http://8000-sbx_1.localhost/?token=t", token: "t" }));
    expect((await createPreviewLink(api, "sbx_1", 8000, 600)).url).toMatch(/token=t/);
    expect(await seen[0].json()).toEqual({ port: 8000, ttl: "600s" });
    await createPreviewLink(api, "sbx_1", 8000);
    expect(await seen[1].json()).toEqual({ port: 8000 });
  });

  it("lists a sandbox's snapshots over every page", async () => {
    const { api, seen } = setup((req) =>
      new URL(req.url).searchParams.get("pageToken")
        ? json(200, { snapshots: [{ snapshotId: "snp_2" }], nextPageToken: "" })
        : json(200, { snapshots: [{ snapshotId: "snp_1" }], nextPageToken: "p2" }),
    );
    expect((await listSnapshots(api, "sbx_1")).map((s) => s.snapshotId)).toEqual(["snp_1", "snp_2"]);
    expect(new URL(seen[0].url).searchParams.get("sandboxId")).toBe("sbx_1");
    expect(new URL(seen[1].url).searchParams.get("pageToken")).toBe("p2");
  });

  it("forks and changes the policy", async () => {
    const { api, seen } = setup((req) =>
      req.url.includes(":fork")
        ? json(200, { sandboxes: [{ sandboxId: "sbx_2" }] })
        : req.method === "PATCH"
          ? json(200, { sandbox: { sandboxId: "sbx_1", networkPolicy: { mode: "EGRESS_MODE_DENY" } } })
          : json(404, {}),
    );
    expect(await forkSandbox(api, "sbx_1", 2)).toEqual([{ sandboxId: "sbx_2" }]);
    expect(await seen[0].json()).toEqual({ count: 2 });
    const s = await updateNetworkPolicy(api, "sbx_1", { mode: "EGRESS_MODE_DENY", allowCidrs: [], allowDomains: [] });
    expect(s.networkPolicy?.mode).toBe("EGRESS_MODE_DENY");
    expect(new URL(seen[1].url).pathname).toBe("/v1/sandboxes/sbx_1/network-policy");
    expect(seen[1].headers.get(CSRF_HEADER)).toBe("tok-1");
  });
});
