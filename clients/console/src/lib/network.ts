/**
 * The egress policy as a form (used by the create dialog and the
 * network tab): the four modes in words, the allowlist typed one entry
 * a line, and the server's rules (core/src/egress.rs) checked first so a
 * mistake is named beside its field.
 */
import type { Schemas } from "../api/client";

export type NetworkPolicy = Schemas["NetworkPolicy"];
export type EgressMode = "EGRESS_MODE_OPEN" | "EGRESS_MODE_ALLOWLIST" | "EGRESS_MODE_SEALED" | "EGRESS_MODE_DENY";

/** Most entries (CIDRs and domains together) of one allowlist. */
export const MAX_RULES = 256;

export const MODES: { mode: EgressMode; label: string; hint: string }[] = [
  { mode: "EGRESS_MODE_OPEN", label: "Allow all", hint: "Any public address (the default)." },
  {
    mode: "EGRESS_MODE_ALLOWLIST",
    label: "Allowlist",
    hint: "Only the domains and IPv4 CIDRs listed; other names are refused.",
  },
  { mode: "EGRESS_MODE_SEALED", label: "Sealed", hint: "Nothing: the interface stays, no packet leaves it (DNS included)." },
  { mode: "EGRESS_MODE_DENY", label: "Deny all", hint: "Nothing: the interface is removed, only loopback is left." },
];

export interface PolicyForm {
  mode: EgressMode;
  /** One a line (commas and spaces separate too). */
  domains: string;
  cidrs: string;
}

export const openPolicyForm = (): PolicyForm => ({ mode: "EGRESS_MODE_OPEN", domains: "", cidrs: "" });

/** A known mode (unspecified and unknown read as open, as the API says). */
export function modeOf(p: NetworkPolicy | undefined): EgressMode {
  const m = p?.mode;
  return MODES.some((x) => x.mode === m) ? (m as EgressMode) : "EGRESS_MODE_OPEN";
}

export function policyForm(p: NetworkPolicy | undefined): PolicyForm {
  return { mode: modeOf(p), domains: (p?.allowDomains ?? []).join("\n"), cidrs: (p?.allowCidrs ?? []).join("\n") };
}

export function modeLabel(p: NetworkPolicy | undefined): string {
  const m = modeOf(p);
  return MODES.find((x) => x.mode === m)?.label ?? "Allow all";
}

/** The entries of a list field: split on lines, commas and spaces, blank ones and repeats dropped. */
export function splitList(s: string): string[] {
  const out: string[] = [];
  for (const x of s.split(/[\s,]+/)) if (x && !out.includes(x)) out.push(x);
  return out;
}

const OCTET = /^(0|[1-9]\d{0,2})$/;

/** Why a CIDR (or a bare IPv4 address, a /32) is refused, or undefined. */
export function cidrError(c: string): string | undefined {
  const [addr, len, extra] = c.split("/");
  if (extra !== undefined) return `${c} is not an IPv4 CIDR`;
  if (addr.includes(":")) return `${c}: egress is IPv4 only`;
  const parts = addr.split(".");
  if (parts.length !== 4 || !parts.every((p) => OCTET.test(p) && Number(p) <= 255)) return `${c} is not an IPv4 address or CIDR`;
  if (len !== undefined && (!/^\d{1,2}$/.test(len) || Number(len) > 32)) return `${c}: the prefix length is 0 to 32`;
  return undefined;
}

/** Why a domain (`example.com`, or `*.example.com` for every name below it) is refused, or undefined. */
export function domainError(d: string): string | undefined {
  const name = d.startsWith("*.") ? d.slice(2) : d;
  const ok =
    name.length > 0 &&
    name.length <= 253 &&
    name.split(".").every((l) => l.length > 0 && l.length <= 63 && /^[A-Za-z0-9-]+$/.test(l) && !l.startsWith("-") && !l.endsWith("-"));
  return ok ? undefined : `${d} is not a domain name`;
}

/** Checks the form; the policy to send when it is valid. */
export function validatePolicy(f: PolicyForm): { errors: { domains?: string; cidrs?: string }; policy?: NetworkPolicy } {
  if (f.mode !== "EGRESS_MODE_ALLOWLIST") return { errors: {}, policy: { mode: f.mode, allowDomains: [], allowCidrs: [] } };
  const domains = splitList(f.domains);
  const cidrs = splitList(f.cidrs);
  const errors: { domains?: string; cidrs?: string } = {};
  const d = domains.map(domainError).find(Boolean);
  if (d) errors.domains = d;
  const c = cidrs.map(cidrError).find(Boolean);
  if (c) errors.cidrs = c;
  if (domains.length + cidrs.length > MAX_RULES) errors.domains = `An allowlist holds at most ${MAX_RULES} entries in all`;
  if (Object.keys(errors).length) return { errors };
  return { errors: {}, policy: { mode: f.mode, allowDomains: domains, allowCidrs: cidrs } };
}

/** The same policy (mode and entries, in any order)? */
export function samePolicy(a: NetworkPolicy | undefined, b: NetworkPolicy | undefined): boolean {
  const norm = (p: NetworkPolicy | undefined) =>
    JSON.stringify([modeOf(p), [...(p?.allowDomains ?? [])].sort(), [...(p?.allowCidrs ?? [])].sort()]);
  return norm(a) === norm(b);
}
