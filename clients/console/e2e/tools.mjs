// What the files, previews, snapshots and network tests share: REST
// set-up inside a sandbox (write and read a file's raw bytes, start a
// web server on a port) and a developer signed in on a sandbox's tab.
import assert from "node:assert/strict";
import { addUser, base, call, consoleUrl, makeSandbox, makeTenant, newSession, signIn, until } from "./lib.mjs";

/** Writes a file's bytes through REST (raw upload). */
export async function putFile(t, id, path, data) {
  const r = await fetch(`${base}/v1/sandboxes/${id}/files:write?${new URLSearchParams({ path, createParents: "true" })}`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.token}`, "content-type": "application/octet-stream" },
    body: data,
  });
  assert.equal(r.status, 200, await r.text());
}

/** A file's bytes through REST, or null when it does not exist (404). */
export async function getFile(t, id, path) {
  const r = await fetch(`${base}/v1/sandboxes/${id}/files:read?${new URLSearchParams({ path })}`, {
    headers: { authorization: `Bearer ${t.token}`, accept: "application/octet-stream" },
  });
  if (r.status === 404) return null;
  assert.equal(r.status, 200, `read ${path}: ${r.status}`);
  return Buffer.from(await r.arrayBuffer());
}

/** Runs a shell command in the sandbox through REST; its NDJSON answer as text. */
export async function sh(t, id, script) {
  const r = await fetch(`${base}/v1/sandboxes/${id}/processes`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.token}`, "content-type": "application/json" },
    body: JSON.stringify({ command: ["sh", "-c", script] }),
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return text;
}

/** Serves `html` as index.html on `port` (python3 -m http.server), once the port listens. */
export async function startServer(t, id, port, html) {
  await putFile(t, id, "/workspace/site/index.html", html);
  await sh(t, id, `cd /workspace/site && nohup python3 -m http.server ${port} >/dev/null 2>&1 &`);
  await until(async () => {
    const r = await fetch(`${base}/v1/sandboxes/${id}/ports`, { headers: { authorization: `Bearer ${t.token}` } });
    return ((await r.json()).ports ?? []).some((p) => p.port === port);
  }, `port ${port} to listen`);
}

/** A new tenant, a user of `role` signed in, and a running sandbox; the page on its `tab`. */
export async function signedInOn(browser, label, tab, o = {}) {
  const t = await makeTenant(label);
  const who = await addUser(t, o.role ?? "ROLE_DEVELOPER", o.role === "ROLE_VIEWER" ? "viewer" : "dev");
  const sbx = await makeSandbox(t, o.sandbox ?? {});
  await o.before?.(t, sbx);
  const s = await newSession(browser, o.context ?? {});
  await signIn(s.page, who);
  await s.page.goto(`${consoleUrl}/sandboxes/${sbx.sandboxId}/${tab}`);
  return { t, who, sbx, id: sbx.sandboxId, ...s };
}

/** The toast that says `title` (success and info toasts are status messages). */
export const toast = (page, title) => page.getByRole("region", { name: "Notifications" }).getByText(title, { exact: true }).first();

/** Takes a snapshot of the sandbox through REST. */
export async function snapshotOf(t, id, name) {
  return (await call("POST", `/v1/sandboxes/${id}/snapshots`, t.token, { name })).snapshot;
}
