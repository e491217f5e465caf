/**
 * A sandbox's browser (BrowserService): its state, start and stop, and
 * screenshots of its first page for the console's view of it. The live
 * view (`liveViewUrl`) is the gateway's own page, opened in a tab of its
 * own; its URL carries a DevTools token, so only developers get it.
 */
import type { Api, Schemas } from "./client";

export type Browser = Schemas["Browser"];
export type Screenshot = { src: string; url: string; title: string };

const path = (id: string) => ({ params: { path: { sandboxId: id } } });

export async function getBrowser(api: Api, id: string): Promise<Browser> {
  const r = await api.call(api.client.GET("/v1/sandboxes/{sandboxId}/browser", path(id)));
  return r.browser ?? {};
}

/** A window size as the API takes it: `W,H`, each 100 to 7680; empty is 1280,720. */
export function windowSizeError(s: string): string {
  if (!s) return "";
  const m = /^(\d{3,4}),(\d{3,4})$/.exec(s);
  if (!m || [m[1], m[2]].some((v) => Number(v) < 100 || Number(v) > 7680)) {
    return "A window size is W,H in pixels, e.g. 1280,720 (each 100 to 7680).";
  }
  return "";
}

export async function startBrowser(api: Api, id: string, windowSize: string): Promise<Browser> {
  const r = await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/browser:start", {
      ...path(id),
      body: windowSize ? { windowSize } : {},
    }),
  );
  return r.browser ?? {};
}

export async function stopBrowser(api: Api, id: string): Promise<void> {
  await api.call(api.client.POST("/v1/sandboxes/{sandboxId}/browser:stop", { ...path(id), body: {} }));
}

/** A screenshot as a data URL (the console's CSP allows data: images). */
export async function screenshot(api: Api, id: string): Promise<Screenshot> {
  const r = await api.call(api.client.GET("/v1/sandboxes/{sandboxId}/browser/screenshot", path(id)));
  const png = r.png ?? "";
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(png)) throw new Error("the screenshot is not base64");
  return { src: `data:image/png;base64,${png}`, url: r.url ?? "", title: r.title ?? "" };
}
