/**
 * What a tenant keeps beside its sandboxes: secrets (names and delivery;
 * a value is written, never read back) and volumes. The name rules are
 * the server's, checked here first so a form can say what is wrong
 * before anything is sent.
 */
import type { Api, Schemas } from "./client";

export type Secret = Schemas["Secret"];
export type SecretDelivery = NonNullable<Secret["delivery"]>;
export type Volume = Schemas["Volume"];

const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const VOLUME_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function secretNameError(name: string): string {
  if (!name) return "Enter a name.";
  return SECRET_NAME.test(name)
    ? ""
    : "A secret's name is 1 to 128 of A-Z, 0-9 and _, not starting with a digit (it becomes an environment variable).";
}

export function volumeNameError(name: string): string {
  if (!name) return "Enter a name.";
  return VOLUME_NAME.test(name) ? "" : "A volume's name is 1 to 63 of a-z, 0-9 and -, starting with a letter or digit.";
}

/** A size in MiB from a form: empty is the server's default; else a whole number ≥ 1. */
export function sizeMib(text: string): { value?: number; error: string } {
  const t = text.trim();
  if (!t) return { error: "" };
  if (!/^\d+$/.test(t) || Number(t) < 1) return { error: "The size is a whole number of MiB, at least 1." };
  return { value: Number(t), error: "" };
}

/** Every page of a paged list (small lists: secrets and volumes of one tenant). */
export async function allPages<T>(
  page: (token: string) => Promise<{ items: T[]; next: string }>,
  maxPages = 50,
): Promise<T[]> {
  const out: T[] = [];
  let token = "";
  for (let i = 0; i < maxPages; i++) {
    const r = await page(token);
    out.push(...r.items);
    if (!r.next) break;
    token = r.next;
  }
  return out;
}

export function listSecrets(api: Api): Promise<Secret[]> {
  return allPages(async (pageToken) => {
    const r = await api.call(
      api.client.GET("/v1/secrets", { params: { query: { pageSize: 200, ...(pageToken ? { pageToken } : {}) } } }),
    );
    return { items: r.secrets ?? [], next: r.nextPageToken ?? "" };
  });
}

export async function putSecret(
  api: Api,
  name: string,
  value: string,
  delivery: SecretDelivery,
  expireTime?: string,
): Promise<Secret> {
  const r = await api.call(
    api.client.PUT("/v1/secrets/{name}", {
      params: { path: { name } },
      body: { value, delivery, ...(expireTime ? { expireTime } : {}) },
    }),
  );
  return r.secret ?? { name };
}

export async function deleteSecret(api: Api, name: string): Promise<void> {
  await api.call(api.client.DELETE("/v1/secrets/{name}", { params: { path: { name } } }));
}

export function listVolumes(api: Api): Promise<Volume[]> {
  return allPages(async (pageToken) => {
    const r = await api.call(
      api.client.GET("/v1/volumes", { params: { query: { pageSize: 500, ...(pageToken ? { pageToken } : {}) } } }),
    );
    return { items: r.volumes ?? [], next: r.nextPageToken ?? "" };
  });
}

export async function createVolume(api: Api, name: string, size?: number): Promise<Volume> {
  const r = await api.call(
    api.client.POST("/v1/volumes", { body: { volume: { name, ...(size ? { sizeMib: String(size) } : {}) } } }),
  );
  return r.volume ?? { name };
}

export async function deleteVolume(api: Api, name: string): Promise<void> {
  await api.call(api.client.DELETE("/v1/volumes/{name}", { params: { path: { name } } }));
}
