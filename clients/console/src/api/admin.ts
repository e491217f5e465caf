/**
 * The owner and platform-admin calls: tenants and their quotas, users and
 * roles, API keys, workers (drain, undrain), moving a sandbox, and the
 * audit log. Who may call what is the server's access table
 * (server/src/rbac.rs); `isOwner` and `isPlatformAdmin` only decide which
 * controls the console offers.
 */
import { type Api, type Schemas } from "./client";
import type { WhoAmI } from "./sandboxes";

export type Worker = Schemas["Worker"];
export type WorkerState = NonNullable<Worker["state"]>;
export type Capacity = Schemas["WorkerCapacity"];
export type Tenant = Schemas["Tenant"];
export type Quota = Schemas["Quota"];
export type User = Schemas["User"];
export type UserRole = NonNullable<User["role"]>;
export type ApiKey = Schemas["ApiKey"];
export type AuditEvent = Schemas["AuditEvent"];
export type PlatformServer = Schemas["PlatformServer"];
export type PlatformMetrics = Schemas["GetPlatformMetricsResponse"];
export type MetricFamily = Schemas["MetricFamily"];
export type WorkerSandbox = Schemas["WorkerSandbox"];
export type SandboxMove = Schemas["SandboxMove"];

/** An owner of the platform tenant (WhoAmI says so). */
export function isPlatformAdmin(me: WhoAmI | null | undefined): boolean {
  return !!me?.platformAdmin;
}

/** An owner of their tenant, or a platform admin. */
export function isOwner(me: WhoAmI | null | undefined): boolean {
  return !!me && (me.role === "ROLE_OWNER" || !!me.platformAdmin);
}

/** The roles, highest first, as CreateUser, UpdateUser and CreateApiKey take them. */
export const ROLES: UserRole[] = ["ROLE_OWNER", "ROLE_DEVELOPER", "ROLE_VIEWER"];

const RANK: Record<string, number> = { ROLE_VIEWER: 1, ROLE_DEVELOPER: 2, ROLE_OWNER: 3 };

/** The roles a key of someone with `role` may have (never above their own). */
export function keyRoles(role: string | undefined): UserRole[] {
  const mine = RANK[role ?? ""] ?? 1;
  return ROLES.filter((r) => RANK[r] <= mine);
}

// ------------------------------------------------------------- workers

export async function listWorkers(api: Api): Promise<Worker[]> {
  const r = await api.call(api.client.GET("/v1/admin/workers"));
  return r.workers ?? [];
}

/** Drains a worker (no new sandboxes), or undrains it. */
export async function drainWorker(api: Api, workerId: string, undrain: boolean): Promise<Worker | undefined> {
  const r = await api.call(
    api.client.POST("/v1/admin/workers/{workerId}:drain", {
      params: { path: { workerId } },
      body: undrain ? { undrain: true } : {},
    }),
  );
  return r.worker;
}

/** Moves a sandbox to `workerId` (the scheduler's choice when empty). */
export async function reassignSandbox(
  api: Api,
  sandboxId: string,
  workerId: string,
): Promise<{ workerId: string; generation: string }> {
  const r = await api.call(
    api.client.POST("/v1/admin/sandboxes/{sandboxId}:reassign", {
      params: { path: { sandboxId } },
      body: workerId ? { workerId } : {},
    }),
  );
  return { workerId: r.workerId ?? "", generation: String(r.generation ?? "") };
}

/**
 * Forgets a worker gone for good: the server refuses one that is
 * connected or still holds a sandbox or a snapshot, and says why.
 */
export async function forgetWorker(api: Api, workerId: string): Promise<void> {
  await api.call(api.client.DELETE("/v1/admin/workers/{workerId}", { params: { path: { workerId } } }));
}

/** One page of the sandboxes a worker holds, of every tenant (no contents: what placement needs). */
export async function listWorkerSandboxes(
  api: Api,
  workerId: string,
  pageToken = "",
  pageSize = 50,
): Promise<{ sandboxes: WorkerSandbox[]; nextPageToken: string }> {
  const r = await api.call(
    api.client.GET("/v1/admin/workers/{workerId}/sandboxes", {
      params: { path: { workerId }, query: { pageSize, ...(pageToken ? { pageToken } : {}) } },
    }),
  );
  return { sandboxes: r.sandboxes ?? [], nextPageToken: r.nextPageToken ?? "" };
}

/**
 * Finds a sandbox of any tenant on the given workers (GetSandbox is the
 * caller's tenant only, even for an admin): its record and its worker,
 * or null. Reads at most `maxPages` pages of 500 per worker.
 */
export async function findOnWorkers(
  api: Api,
  workers: Worker[],
  sandboxId: string,
  maxPages = 20,
): Promise<{ sandbox: WorkerSandbox; workerId: string } | null> {
  for (const w of workers) {
    const workerId = w.workerId ?? "";
    let token = "";
    for (let page = 0; page < maxPages; page++) {
      const r = await listWorkerSandboxes(api, workerId, token, 500);
      const found = r.sandboxes.find((s) => s.sandboxId === sandboxId);
      if (found) return { sandbox: found, workerId };
      token = r.nextPageToken;
      if (!token) break;
    }
  }
  return null;
}

/** One page of the failover history, newest first (by cursor: a move recorded meanwhile shifts nothing). */
export async function listSandboxMoves(
  api: Api,
  pageToken = "",
  pageSize = 20,
): Promise<{ moves: SandboxMove[]; nextPageToken: string }> {
  const r = await api.call(
    api.client.GET("/v1/admin/sandbox-moves", { params: { query: { pageSize, ...(pageToken ? { pageToken } : {}) } } }),
  );
  return { moves: r.moves ?? [], nextPageToken: r.nextPageToken ?? "" };
}

/** The control plane's servers, and which holds the duties. */
export async function listServers(api: Api): Promise<PlatformServer[]> {
  const r = await api.call(api.client.GET("/v1/admin/servers"));
  return r.servers ?? [];
}

/** The answering server's figures, and sandboxes and workers by state. */
export async function getPlatformMetrics(api: Api): Promise<PlatformMetrics> {
  return await api.call(api.client.GET("/v1/admin/metrics"));
}

// ----------------------------------------------------------- audit log

export interface AuditQuery {
  tenantId?: string;
  actorId?: string;
  method?: string;
  resourceId?: string;
  /** RFC 3339. */
  startTime?: string;
  endTime?: string;
}

export async function listAuditEvents(
  api: Api,
  q: AuditQuery,
  page: { pageSize?: number; pageToken?: string } = {},
): Promise<{ events: AuditEvent[]; nextPageToken: string }> {
  const query: Record<string, string | number> = { pageSize: page.pageSize ?? 50 };
  if (page.pageToken) query.pageToken = page.pageToken;
  for (const [k, v] of Object.entries(q)) if (v) query[k] = v;
  const r = await api.call(api.client.GET("/v1/admin/audit-events", { params: { query } }));
  return { events: r.auditEvents ?? [], nextPageToken: r.nextPageToken ?? "" };
}

// ------------------------------------------------------------- tenants

export async function listTenants(
  api: Api,
  pageToken = "",
): Promise<{ tenants: Tenant[]; nextPageToken: string }> {
  const query = { pageSize: 100, ...(pageToken ? { pageToken } : {}) };
  const r = await api.call(api.client.GET("/v1/tenants", { params: { query } }));
  return { tenants: r.tenants ?? [], nextPageToken: r.nextPageToken ?? "" };
}

/** A tenant with its quota and usage ("-": the caller's own). */
export async function getTenant(api: Api, tenantId = "-"): Promise<Tenant> {
  const r = await api.call(api.client.GET("/v1/tenants/{tenantId}", { params: { path: { tenantId } } }));
  if (!r.tenant) throw new Error("the gateway answered without the tenant");
  return r.tenant;
}

export async function createTenant(api: Api, body: Schemas["CreateTenantRequest"]): Promise<Tenant> {
  const r = await api.call(api.client.POST("/v1/tenants", { body }));
  if (!r.tenant) throw new Error("the gateway answered without the tenant");
  return r.tenant;
}

export async function updateQuota(api: Api, tenantId: string, quota: Quota): Promise<Tenant> {
  const r = await api.call(
    api.client.PATCH("/v1/tenants/{tenantId}/quota", { params: { path: { tenantId } }, body: quota }),
  );
  if (!r.tenant) throw new Error("the gateway answered without the tenant");
  return r.tenant;
}

// --------------------------------------------------------------- users

/** Every user of a tenant (paged through). */
export async function listUsers(api: Api, tenantId = "-"): Promise<User[]> {
  const out: User[] = [];
  let pageToken = "";
  do {
    const r = await api.call(
      api.client.GET("/v1/tenants/{tenantId}/users", {
        params: { path: { tenantId }, query: { pageSize: 500, ...(pageToken ? { pageToken } : {}) } },
      }),
    );
    out.push(...(r.users ?? []));
    pageToken = r.nextPageToken ?? "";
  } while (pageToken);
  return out;
}

export async function createUser(
  api: Api,
  tenantId: string,
  body: { email: string; password: string; role: UserRole },
): Promise<User> {
  const r = await api.call(api.client.POST("/v1/tenants/{tenantId}/users", { params: { path: { tenantId } }, body }));
  if (!r.user) throw new Error("the gateway answered without the user");
  return r.user;
}

export async function updateUser(
  api: Api,
  tenantId: string,
  userId: string,
  change: { role?: UserRole; disabled?: boolean },
): Promise<User> {
  const r = await api.call(
    api.client.PATCH("/v1/tenants/{tenantId}/users/{userId}", { params: { path: { tenantId, userId } }, body: change }),
  );
  if (!r.user) throw new Error("the gateway answered without the user");
  return r.user;
}

export async function deleteUser(api: Api, tenantId: string, userId: string): Promise<void> {
  await api.call(api.client.DELETE("/v1/tenants/{tenantId}/users/{userId}", { params: { path: { tenantId, userId } } }));
}

// ------------------------------------------------------------ API keys

/** The keys the caller may see: all of the tenant's for owners, else their own. */
export async function listApiKeys(api: Api): Promise<ApiKey[]> {
  const out: ApiKey[] = [];
  let pageToken = "";
  do {
    const r = await api.call(
      api.client.GET("/v1/tenants/{tenantId}/api-keys", {
        params: { path: { tenantId: "-" }, query: { pageSize: 500, ...(pageToken ? { pageToken } : {}) } },
      }),
    );
    out.push(...(r.apiKeys ?? []));
    pageToken = r.nextPageToken ?? "";
  } while (pageToken);
  return out;
}

/** A key for the caller: its record and its secret, which is never shown again. */
export async function createApiKey(
  api: Api,
  body: { name: string; role: UserRole; expireTime?: string },
): Promise<{ key: ApiKey; secret: string }> {
  const r = await api.call(
    api.client.POST("/v1/tenants/{tenantId}/api-keys", { params: { path: { tenantId: "-" } }, body }),
  );
  if (!r.secret || !r.apiKey) throw new Error("the gateway answered without the key");
  return { key: r.apiKey, secret: r.secret };
}

export async function deleteApiKey(api: Api, apiKeyId: string): Promise<void> {
  await api.call(
    api.client.DELETE("/v1/tenants/{tenantId}/api-keys/{apiKeyId}", { params: { path: { tenantId: "-", apiKeyId } } }),
  );
}
