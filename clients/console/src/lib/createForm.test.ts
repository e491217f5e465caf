import { describe, expect, it } from "vitest";
import { type CreateForm, emptyForm, validateCreate } from "./createForm";

const form = (o: Partial<CreateForm>): CreateForm => ({ ...emptyForm(), ...o });

describe("the create form", () => {
  it("makes the smallest request from the defaults", () => {
    expect(validateCreate(emptyForm())).toEqual({
      errors: {},
      body: { image: "host", isolation: "ISOLATION_CONTAINER", timeoutAction: "TIMEOUT_ACTION_PAUSE", autoResume: false },
    });
  });

  it("makes a full request with the API's encodings", () => {
    const r = validateCreate(
      form({
        image: " python:3.12 ",
        isolation: "ISOLATION_GVISOR",
        cpuMillis: "500",
        memoryMib: "1024",
        diskMib: "2048",
        timeoutSecs: "3600",
        timeoutAction: "TIMEOUT_ACTION_DELETE",
        idleTimeoutSecs: "60",
        autoResume: true,
        env: [{ key: "FOO", value: "bar" }, { key: "", value: "" }],
        metadata: [{ key: "user id", value: "Ada, née Byron = 1" }],
        labels: [{ key: "team/ml", value: "core" }],
      }),
    );
    expect(r.errors).toEqual({});
    expect(r.body).toEqual({
      image: "python:3.12",
      isolation: "ISOLATION_GVISOR",
      timeoutAction: "TIMEOUT_ACTION_DELETE",
      autoResume: true,
      resources: { cpuMillis: "500", memoryMib: "1024", diskMib: "2048" },
      timeout: "3600s",
      idleTimeout: "60s",
      env: { FOO: "bar" },
      metadata: { "user id": "Ada, née Byron = 1" },
      labels: { "team/ml": "core" },
    });
  });

  it("names each bad number with its bounds", () => {
    const r = validateCreate(
      form({ cpuMillis: "5", memoryMib: "1.5", diskMib: "-1", timeoutSecs: "0", idleTimeoutSecs: "3" }),
    );
    expect(r.body).toBeUndefined();
    expect(r.errors).toEqual({
      cpuMillis: "CPU must be at least 10",
      memoryMib: "Memory must be a whole number",
      diskMib: "Disk must be a whole number",
      timeoutSecs: "The timeout must be at least 1",
      idleTimeoutSecs: "The idle timeout is at least 10 seconds (or 0: never)",
    });
    expect(validateCreate(form({ cpuMillis: "2000000" })).errors.cpuMillis).toBe("CPU must be at most 1,000,000");
  });

  it("treats an idle timeout of 0 as never", () => {
    expect(validateCreate(form({ idleTimeoutSecs: "0" })).body?.idleTimeout).toBeUndefined();
  });

  it("refuses a bad image name", () => {
    expect(validateCreate(form({ image: "my image" })).errors.image).toMatch(/no spaces/);
  });

  it("checks environment names, duplicates and values", () => {
    const r = validateCreate(
      form({
        env: [
          { key: "1BAD", value: "x" },
          { key: "OK", value: "a" },
          { key: "OK", value: "b" },
          { key: "", value: "orphan" },
          { key: "NUL", value: "a\0b" },
        ],
      }),
    );
    expect(r.errors).toEqual({
      "env.0.key": "A name is letters, digits and _, not starting with a digit",
      "env.2.key": "OK is given twice",
      "env.3.key": "A variable needs a name",
      "env.4.value": "A value cannot hold a NUL character",
    });
  });

  it("holds metadata to the server's limits", () => {
    const r = validateCreate(
      form({
        metadata: [
          { key: "k".repeat(257), value: "v" },
          { key: "ok", value: "x".repeat(4097) },
          { key: "tab", value: "a\tb" },
        ],
      }),
    );
    expect(Object.keys(r.errors).sort()).toEqual(["metadata.0.key", "metadata.1.value", "metadata.2.value"]);
    const many = Array.from({ length: 65 }, (_, i) => ({ key: `k${i}`, value: "v" }));
    expect(validateCreate(form({ metadata: many })).errors.metadata).toBe("At most 64 metadata entries");
    const big = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: "v".repeat(4000) }));
    expect(validateCreate(form({ metadata: big })).errors.metadata).toBe("Metadata is larger than 32 KiB in all");
    // Multi-byte characters count as bytes.
    expect(validateCreate(form({ metadata: [{ key: "é", value: "é".repeat(2049) }] })).errors["metadata.0.value"]).toBeDefined();
  });

  it("holds labels to the selector's syntax", () => {
    const r = validateCreate(
      form({ labels: [{ key: "a b", value: "x" }, { key: "ok", value: "x,y" }, { key: "k".repeat(64), value: "" }] }),
    );
    expect(Object.keys(r.errors).sort()).toEqual(["labels.0.key", "labels.1.value", "labels.2.key"]);
  });
});

describe("the create form's network policy and volumes", () => {
  it("sends a policy only when it is not the default", () => {
    expect(validateCreate(emptyForm()).body?.networkPolicy).toBeUndefined();
    expect(validateCreate(form({ network: { mode: "EGRESS_MODE_DENY", domains: "", cidrs: "" } })).body?.networkPolicy).toEqual({
      mode: "EGRESS_MODE_DENY",
      allowDomains: [],
      allowCidrs: [],
    });
    const r = validateCreate(
      form({ network: { mode: "EGRESS_MODE_ALLOWLIST", domains: "pypi.org\n*.pythonhosted.org", cidrs: "1.1.1.1/32" } }),
    );
    expect(r.body?.networkPolicy).toEqual({
      mode: "EGRESS_MODE_ALLOWLIST",
      allowDomains: ["pypi.org", "*.pythonhosted.org"],
      allowCidrs: ["1.1.1.1/32"],
    });
  });

  it("names a bad allowlist entry beside its field", () => {
    const r = validateCreate(form({ network: { mode: "EGRESS_MODE_ALLOWLIST", domains: "no_way", cidrs: "1.2.3.4/40" } }));
    expect(r.body).toBeUndefined();
    expect(r.errors).toEqual({ "network.domains": "no_way is not a domain name", "network.cidrs": "1.2.3.4/40: the prefix length is 0 to 32" });
  });

  it("mounts volumes by name at a path", () => {
    const r = validateCreate(form({ volumes: [{ name: "data", path: " /workspace/data ", readOnly: true }] }));
    expect(r.body?.volumeMounts).toEqual([{ name: "data", path: "/workspace/data", readOnly: true }]);
    expect(validateCreate(emptyForm()).body?.volumeMounts).toBeUndefined();
  });

  it("holds mounts to the server's rules", () => {
    const r = validateCreate(
      form({
        volumes: [
          { name: "", path: "/data", readOnly: false },
          { name: "a", path: "data", readOnly: false },
          { name: "b", path: "/proc/x", readOnly: false },
          { name: "b", path: "/a/../b", readOnly: false },
          { name: "c", path: "/", readOnly: false },
          { name: "d", path: "/data", readOnly: false },
          { name: "e", path: "/with space", readOnly: false },
        ],
      }),
    );
    expect(r.errors).toEqual({
      "volumes.0.name": "Pick a volume",
      "volumes.1.path": "The path is absolute (starts with /)",
      "volumes.2.path": "A volume cannot be mounted under /proc",
      "volumes.3.name": "b is mounted twice",
      "volumes.3.path": "A path has no empty, . or .. part",
      "volumes.4.path": "A path is at most 255 of A-Z a-z 0-9 . _ / -, not / itself",
      "volumes.5.path": "Two volumes on one path",
      "volumes.6.path": "A path is at most 255 of A-Z a-z 0-9 . _ / -, not / itself",
    });
    const nine = Array.from({ length: 9 }, (_, i) => ({ name: `v${i}`, path: `/m/${i}`, readOnly: false }));
    expect(validateCreate(form({ volumes: nine })).errors.volumes).toBe("At most 8 volumes");
  });
});
