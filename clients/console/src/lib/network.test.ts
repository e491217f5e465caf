import { describe, expect, it } from "vitest";
import { cidrError, domainError, modeLabel, policyForm, samePolicy, splitList, validatePolicy } from "./network";

describe("the egress policy form", () => {
  it("reads a policy into the form and back", () => {
    const p = { mode: "EGRESS_MODE_ALLOWLIST" as const, allowDomains: ["pypi.org", "*.npmjs.org"], allowCidrs: ["1.1.1.1/32"] };
    const f = policyForm(p);
    expect(f).toEqual({ mode: "EGRESS_MODE_ALLOWLIST", domains: "pypi.org\n*.npmjs.org", cidrs: "1.1.1.1/32" });
    expect(validatePolicy(f)).toEqual({ errors: {}, policy: p });
    expect(policyForm(undefined).mode).toBe("EGRESS_MODE_OPEN");
    expect(policyForm({ mode: "EGRESS_MODE_UNSPECIFIED" }).mode).toBe("EGRESS_MODE_OPEN");
    expect(modeLabel({ mode: "EGRESS_MODE_DENY" })).toBe("Deny all");
  });

  it("sends no entries for the modes without them", () => {
    expect(validatePolicy({ mode: "EGRESS_MODE_DENY", domains: "left.over", cidrs: "x" })).toEqual({
      errors: {},
      policy: { mode: "EGRESS_MODE_DENY", allowDomains: [], allowCidrs: [] },
    });
  });

  it("splits lists on lines, commas and spaces, without repeats", () => {
    expect(splitList(" a.com,b.com\n\n a.com  c.com\r\n")).toEqual(["a.com", "b.com", "c.com"]);
  });

  it("holds CIDRs to the server's rules", () => {
    for (const ok of ["1.2.3.4", "8.8.8.0/24", "0.0.0.0/0", "255.255.255.255/32"]) expect(cidrError(ok), ok).toBeUndefined();
    expect(cidrError("1.2.3.4/33")).toMatch(/0 to 32/);
    expect(cidrError("1.2.3.4/")).toMatch(/0 to 32/);
    expect(cidrError("256.1.1.1")).toMatch(/not an IPv4/);
    expect(cidrError("01.2.3.4")).toMatch(/not an IPv4/);
    expect(cidrError("1.2.3")).toMatch(/not an IPv4/);
    expect(cidrError("2001:db8::/32")).toMatch(/IPv4 only/);
    expect(cidrError("1.2.3.4/8/8")).toMatch(/not an IPv4 CIDR/);
  });

  it("holds domains to the server's rules", () => {
    for (const ok of ["pypi.org", "*.npmjs.org", "a-b.example", "localhost"]) expect(domainError(ok), ok).toBeUndefined();
    for (const bad of ["bad_domain.org", "-x.org", "x-.org", "a..b", "*.", "", "a".repeat(64) + ".com", "http://x.org"]) {
      expect(domainError(bad), bad).toMatch(/not a domain name/);
    }
  });

  it("names the first bad entry of each list", () => {
    const r = validatePolicy({ mode: "EGRESS_MODE_ALLOWLIST", domains: "ok.org bad_one.org", cidrs: "1.1.1.1 nope" });
    expect(r.policy).toBeUndefined();
    expect(r.errors).toEqual({ domains: "bad_one.org is not a domain name", cidrs: "nope is not an IPv4 address or CIDR" });
    const many = Array.from({ length: 257 }, (_, i) => `h${i}.org`).join("\n");
    expect(validatePolicy({ mode: "EGRESS_MODE_ALLOWLIST", domains: many, cidrs: "" }).errors.domains).toMatch(/at most 256/);
  });

  it("compares policies whatever the order of entries", () => {
    expect(samePolicy({ mode: "EGRESS_MODE_ALLOWLIST", allowDomains: ["a", "b"] }, { mode: "EGRESS_MODE_ALLOWLIST", allowDomains: ["b", "a"], allowCidrs: [] })).toBe(true);
    expect(samePolicy(undefined, { mode: "EGRESS_MODE_OPEN" })).toBe(true);
    expect(samePolicy({ mode: "EGRESS_MODE_SEALED" }, { mode: "EGRESS_MODE_DENY" })).toBe(false);
  });
});
