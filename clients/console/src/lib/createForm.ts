/**
 * The create dialog's form: its fields as typed, the rules the server
 * holds a create to (server/src/domain/sandboxes/validate.rs), checked
 * here first so a mistake gets a clear message beside its field, and the
 * request body it makes.
 */
import type { Sandbox } from "../api/sandboxes";
import { type PolicyForm, openPolicyForm, validatePolicy } from "./network";

export interface Pair {
  key: string;
  value: string;
}

/** A volume to mount: an existing volume's name, where, and whether read-only. */
export interface MountRow {
  name: string;
  path: string;
  readOnly: boolean;
}

/** At most this many volumes per sandbox. */
export const MAX_MOUNTS = 8;

export type Isolation = "ISOLATION_CONTAINER" | "ISOLATION_GVISOR";
export type TimeoutAction = "TIMEOUT_ACTION_PAUSE" | "TIMEOUT_ACTION_DELETE";

export interface CreateForm {
  image: string;
  isolation: Isolation;
  /** Numbers as typed; empty takes the server's default. */
  cpuMillis: string;
  memoryMib: string;
  diskMib: string;
  timeoutSecs: string;
  timeoutAction: TimeoutAction;
  /** Empty or 0: never pause for idleness. */
  idleTimeoutSecs: string;
  autoResume: boolean;
  env: Pair[];
  metadata: Pair[];
  labels: Pair[];
  /** The egress policy (allow all when untouched). */
  network: PolicyForm;
  volumes: MountRow[];
}

export const emptyForm = (): CreateForm => ({
  image: "host",
  isolation: "ISOLATION_CONTAINER",
  cpuMillis: "",
  memoryMib: "",
  diskMib: "",
  timeoutSecs: "",
  timeoutAction: "TIMEOUT_ACTION_PAUSE",
  idleTimeoutSecs: "",
  autoResume: false,
  env: [],
  metadata: [],
  labels: [],
  network: openPolicyForm(),
  volumes: [],
});

/** Field errors by name: `cpuMillis`, `env.0.key`, `metadata` (the whole map)… */
export type FormErrors = Record<string, string>;

const bytes = (s: string): number => new TextEncoder().encode(s).length;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY = /^[A-Za-z0-9._/-]{1,63}$/;

/**
 * A whole number from a field: undefined when empty, else the number or
 * an error naming the bounds.
 */
function whole(raw: string, what: string, min: number, max: number): number | string | undefined {
  const t = raw.trim();
  if (!t) return undefined;
  if (!/^\d+$/.test(t)) return `${what} must be a whole number`;
  const n = Number(t);
  if (n < min) return `${what} must be at least ${min.toLocaleString("en")}`;
  if (n > max) return `${what} must be at most ${max.toLocaleString("en")}`;
  return n;
}

/** The rows a person filled in (a row left wholly blank is ignored). */
const filled = (pairs: Pair[]): [number, Pair][] =>
  pairs.map((p, i) => [i, p] as [number, Pair]).filter(([, p]) => p.key !== "" || p.value !== "");

function checkPairs(
  pairs: Pair[],
  field: string,
  e: FormErrors,
  rule: (p: Pair) => { key?: string; value?: string },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, p] of filled(pairs)) {
    const r = rule(p);
    if (r.key) e[`${field}.${i}.key`] = r.key;
    else if (p.key in out) e[`${field}.${i}.key`] = `${p.key} is given twice`;
    if (r.value) e[`${field}.${i}.value`] = r.value;
    out[p.key] = p.value;
  }
  return out;
}

export function envRule(p: Pair): { key?: string; value?: string } {
  if (!p.key) return { key: "A variable needs a name" };
  if (!ENV_NAME.test(p.key)) return { key: "A name is letters, digits and _, not starting with a digit" };
  if (p.value.includes("\0")) return { value: "A value cannot hold a NUL character" };
  return {};
}

export function metadataRule(p: Pair): { key?: string; value?: string } {
  const r: { key?: string; value?: string } = {};
  if (!p.key || bytes(p.key) > 256 || CONTROL.test(p.key)) r.key = "A key is 1 to 256 bytes without control characters";
  if (bytes(p.value) > 4096 || CONTROL.test(p.value)) r.value = "A value is at most 4,096 bytes without control characters";
  return r;
}

export function labelRule(p: Pair): { key?: string; value?: string } {
  const r: { key?: string; value?: string } = {};
  if (!LABEL_KEY.test(p.key)) r.key = "A key is 1 to 63 letters, digits, '.', '_', '-' or '/'";
  if (bytes(p.value) > 255 || /[,=]/.test(p.value) || CONTROL.test(p.value)) {
    r.value = "A value is at most 255 bytes, without ',', '=' or control characters";
  }
  return r;
}

const MOUNT_FORBIDDEN = ["/proc", "/sys", "/dev", "/run", "/.talon", "/var/log/talon"];

/** Why a mount path is refused (the server's rules), or undefined. */
export function mountPathError(path: string): string | undefined {
  if (!path.startsWith("/")) return "The path is absolute (starts with /)";
  if (path === "/" || !/^[A-Za-z0-9._/-]+$/.test(path) || bytes(path) > 255) {
    return "A path is at most 255 of A-Z a-z 0-9 . _ / -, not / itself";
  }
  const parts = path.slice(1).split("/");
  if (parts.some((c) => c === "" || c === "." || c === "..")) return "A path has no empty, . or .. part";
  const under = MOUNT_FORBIDDEN.find((f) => path === f || path.startsWith(`${f}/`));
  if (under) return `A volume cannot be mounted under ${under}`;
  return undefined;
}

function checkMounts(rows: MountRow[], e: FormErrors): NonNullable<Sandbox["volumeMounts"]> {
  const out: NonNullable<Sandbox["volumeMounts"]> = [];
  rows.forEach((r, i) => {
    if (!r.name) e[`volumes.${i}.name`] = "Pick a volume";
    else if (out.some((m) => m.name === r.name)) e[`volumes.${i}.name`] = `${r.name} is mounted twice`;
    const pe = mountPathError(r.path.trim());
    if (pe) e[`volumes.${i}.path`] = pe;
    else if (out.some((m) => m.path === r.path.trim())) e[`volumes.${i}.path`] = "Two volumes on one path";
    out.push({ name: r.name, path: r.path.trim(), readOnly: r.readOnly });
  });
  if (rows.length > MAX_MOUNTS) e.volumes = `At most ${MAX_MOUNTS} volumes`;
  return out;
}

/** Checks the form; the request body when it is valid. */
export function validateCreate(f: CreateForm): { errors: FormErrors; body?: Sandbox } {
  const e: FormErrors = {};
  const image = f.image.trim();
  if (image.length > 255 || /\s/.test(image)) e.image = "An image name has no spaces and at most 255 characters";

  const num = (raw: string, key: string, what: string, min: number, max: number): number | undefined => {
    const v = whole(raw, what, min, max);
    if (typeof v === "string") {
      e[key] = v;
      return undefined;
    }
    return v;
  };
  const cpu = num(f.cpuMillis, "cpuMillis", "CPU", 10, 1_000_000);
  const mem = num(f.memoryMib, "memoryMib", "Memory", 16, 16_777_216);
  const disk = num(f.diskMib, "diskMib", "Disk", 1, 1_073_741_824);
  const timeout = num(f.timeoutSecs, "timeoutSecs", "The timeout", 1, 315_360_000);
  let idle = num(f.idleTimeoutSecs, "idleTimeoutSecs", "The idle timeout", 0, 315_360_000);
  if (idle !== undefined && idle > 0 && idle < 10) {
    e.idleTimeoutSecs = "The idle timeout is at least 10 seconds (or 0: never)";
    idle = undefined;
  }

  const env = checkPairs(f.env, "env", e, envRule);
  const envSize = Object.entries(env).reduce((n, [k, v]) => n + bytes(k) + bytes(v) + 2, 0);
  if (envSize > 128 * 1024) e.env = "The environment is larger than 128 KiB";

  const metadata = checkPairs(f.metadata, "metadata", e, metadataRule);
  if (Object.keys(metadata).length > 64) e.metadata = "At most 64 metadata entries";
  const metaSize = Object.entries(metadata).reduce((n, [k, v]) => n + bytes(k) + bytes(v), 0);
  if (metaSize > 32 * 1024) e.metadata = "Metadata is larger than 32 KiB in all";

  const labels = checkPairs(f.labels, "labels", e, labelRule);
  if (Object.keys(labels).length > 64) e.labels = "At most 64 labels";

  const net = validatePolicy(f.network);
  if (net.errors.domains) e["network.domains"] = net.errors.domains;
  if (net.errors.cidrs) e["network.cidrs"] = net.errors.cidrs;

  const mounts = checkMounts(f.volumes, e);

  if (Object.keys(e).length) return { errors: e };

  const resources: NonNullable<Sandbox["resources"]> = {};
  if (cpu) resources.cpuMillis = String(cpu);
  if (mem) resources.memoryMib = String(mem);
  if (disk) resources.diskMib = String(disk);
  const body: Sandbox = {
    image: image || "host",
    isolation: f.isolation,
    timeoutAction: f.timeoutAction,
    autoResume: f.autoResume,
  };
  if (Object.keys(resources).length) body.resources = resources;
  if (timeout) body.timeout = `${timeout}s`;
  if (idle) body.idleTimeout = `${idle}s`;
  if (Object.keys(env).length) body.env = env;
  if (Object.keys(metadata).length) body.metadata = metadata;
  if (Object.keys(labels).length) body.labels = labels;
  // Allow all is the default: said only when something else is asked for.
  if (net.policy && net.policy.mode !== "EGRESS_MODE_OPEN") body.networkPolicy = net.policy;
  if (mounts.length) body.volumeMounts = mounts;
  return { errors: {}, body };
}
