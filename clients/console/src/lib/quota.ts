/**
 * The quota form: three whole numbers (sandboxes, cpu in cores, memory in
 * MiB) read and checked before UpdateTenantQuota, and how full each limit
 * is. Zero is a real limit (none at all): there is no "unlimited".
 */
import type { Quota, Tenant } from "../api/admin";
import { num } from "./workers";

export interface QuotaForm {
  sandboxes: string;
  /** Cores, may be fractional ("0.5"). */
  cpu: string;
  memoryMib: string;
}

export function quotaToForm(q: Quota | undefined): QuotaForm {
  return {
    sandboxes: String(num(q?.maxSandboxes)),
    cpu: String(num(q?.maxCpuMillis) / 1000),
    memoryMib: String(num(q?.maxMemoryMib)),
  };
}

/** The quota a form asks for, or the errors by field. */
export function formToQuota(f: QuotaForm): { quota?: Quota; errors: Partial<Record<keyof QuotaForm, string>> } {
  const errors: Partial<Record<keyof QuotaForm, string>> = {};
  const whole = (k: keyof QuotaForm) => {
    const t = f[k].trim();
    if (!/^\d+$/.test(t)) errors[k] = "A whole number, 0 or more.";
    return t;
  };
  const sandboxes = whole("sandboxes");
  const memory = whole("memoryMib");
  const cpuText = f.cpu.trim();
  const cpu = Number(cpuText);
  if (!/^\d+(\.\d{1,3})?$/.test(cpuText) || !Number.isFinite(cpu)) errors.cpu = "Cores, 0 or more (up to 3 decimals).";
  if (Object.keys(errors).length) return { errors };
  return {
    quota: { maxSandboxes: sandboxes, maxCpuMillis: String(Math.round(cpu * 1000)), maxMemoryMib: memory },
    errors,
  };
}

export interface QuotaLine {
  label: string;
  used: number;
  limit: number;
  kind: "sandboxes" | "cpuMillis" | "memoryMib";
}

/** Usage against the quota, one line per limit (GetTenant gives both). */
export function quotaLines(t: Tenant): QuotaLine[] {
  return [
    { label: "Sandboxes (not deleted)", used: num(t.usage?.sandboxes), limit: num(t.quota?.maxSandboxes), kind: "sandboxes" },
    { label: "CPU (live sandboxes)", used: num(t.usage?.cpuMillis), limit: num(t.quota?.maxCpuMillis), kind: "cpuMillis" },
    { label: "Memory (live sandboxes)", used: num(t.usage?.memoryMib), limit: num(t.quota?.maxMemoryMib), kind: "memoryMib" },
  ];
}
