/**
 * Preview links: the ports processes in a sandbox listen on, and a signed
 * link to one (a token bound to that sandbox and port, opened with no
 * other credential).
 */
import type { Api, Schemas } from "./client";

export type ListeningPort = Schemas["ListeningPort"];
export type PreviewLink = Schemas["CreatePreviewTokenResponse"];

export async function listPorts(api: Api, id: string): Promise<ListeningPort[]> {
  const r = await api.call(api.client.GET("/v1/sandboxes/{sandboxId}/ports", { params: { path: { sandboxId: id } } }));
  // One port may be listened on twice (IPv4 and IPv6): once each, by port.
  const seen = new Map<number, ListeningPort>();
  for (const p of r.ports ?? []) if (p.port && !seen.has(p.port)) seen.set(p.port, p);
  return [...seen.values()].sort((a, b) => (a.port ?? 0) - (b.port ?? 0));
}

export async function createPreviewLink(api: Api, id: string, port: number, ttlSeconds?: number): Promise<PreviewLink> {
  const r = await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/preview-tokens", {
      params: { path: { sandboxId: id } },
      body: { port, ...(ttlSeconds ? { ttl: `${ttlSeconds}s` } : {}) },
    }),
  );
  if (!r.url) throw new Error("the gateway answered without a link");
  return r;
}
