import { describe, expect, it } from "vitest";
import type { SandboxEvent } from "../api/events";
import { type ListFilter, type Sandbox, type SandboxState, emptyFilter } from "../api/sandboxes";
import { applyEvent, countByState, filterFromQuery, filterToQuery, matches, mergePage } from "./sandboxList";

const sbx = (id: string, minute: number, state: SandboxState = "SANDBOX_STATE_RUNNING", extra: Partial<Sandbox> = {}): Sandbox => ({
  sandboxId: id,
  state,
  createTime: new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString(),
  updateTime: new Date(Date.UTC(2025, 0, 1, 1, minute)).toISOString(),
  generation: "1",
  ...extra,
});
const changed = (s: Sandbox): SandboxEvent => ({ kind: "SANDBOX_EVENT_KIND_STATE_CHANGED", sandbox: s });
const ids = (rows: Sandbox[]) => rows.map((r) => r.sandboxId);
const later = (s: Sandbox, state: SandboxState, minutes = 5): Sandbox => ({
  ...s,
  state,
  updateTime: new Date(Date.parse(s.updateTime!) + minutes * 60_000).toISOString(),
});

describe("the list reducer", () => {
  const rows = [sbx("c", 30), sbx("b", 20), sbx("a", 10)];

  it("updates a sandbox's state in place", () => {
    const next = applyEvent(rows, changed(later(rows[1], "SANDBOX_STATE_PAUSED")), emptyFilter());
    expect(ids(next)).toEqual(["c", "b", "a"]);
    expect(next[1].state).toBe("SANDBOX_STATE_PAUSED");
    expect(rows[1].state).toBe("SANDBOX_STATE_RUNNING"); // not mutated
  });

  it("inserts a new sandbox newest first, and in order", () => {
    expect(ids(applyEvent(rows, changed(sbx("d", 40, "SANDBOX_STATE_STARTING")), emptyFilter()))).toEqual(["d", "c", "b", "a"]);
    expect(ids(applyEvent(rows, changed(sbx("bb", 25)), emptyFilter()))).toEqual(["c", "bb", "b", "a"]);
  });

  it("leaves an older new sandbox to its page while pages are unread", () => {
    expect(applyEvent(rows, changed(sbx("old", 1)), emptyFilter(), false)).toBe(rows);
    expect(ids(applyEvent(rows, changed(sbx("old", 1)), emptyFilter(), true))).toEqual(["c", "b", "a", "old"]);
  });

  it("drops a deleted sandbox unless the filter asks for deleted ones", () => {
    const gone = later(rows[0], "SANDBOX_STATE_DELETED");
    expect(ids(applyEvent(rows, changed(gone), emptyFilter()))).toEqual(["b", "a"]);
    const f: ListFilter = { ...emptyFilter(), states: ["SANDBOX_STATE_DELETED"] };
    expect(ids(applyEvent([], changed(gone), f))).toEqual(["c"]);
  });

  it("drops a sandbox that leaves the filter, adds one that enters it", () => {
    const running: ListFilter = { ...emptyFilter(), states: ["SANDBOX_STATE_RUNNING"] };
    expect(ids(applyEvent(rows, changed(later(rows[2], "SANDBOX_STATE_STOPPED")), running))).toEqual(["c", "b"]);
    const paused: ListFilter = { ...emptyFilter(), states: ["SANDBOX_STATE_PAUSED"] };
    expect(ids(applyEvent([], changed(later(rows[2], "SANDBOX_STATE_PAUSED")), paused))).toEqual(["a"]);
  });

  it("applies the metadata and label filters", () => {
    const f: ListFilter = { states: [], labels: { team: "ml" }, metadata: { run: "r1" } };
    const yes = sbx("m", 50, "SANDBOX_STATE_RUNNING", { labels: { team: "ml" }, metadata: { run: "r1", x: "y" } });
    const no = sbx("n", 51, "SANDBOX_STATE_RUNNING", { labels: { team: "ml" }, metadata: { run: "r2" } });
    expect(matches(yes, f)).toBe(true);
    expect(matches(no, f)).toBe(false);
    expect(ids(applyEvent([], changed(no), f))).toEqual([]);
    expect(ids(applyEvent([], changed(yes), f))).toEqual(["m"]);
  });

  it("ignores an event older than the row it would replace", () => {
    const fresh = later(rows[0], "SANDBOX_STATE_PAUSED", 10);
    const current = applyEvent(rows, changed(fresh), emptyFilter());
    const stale = later(rows[0], "SANDBOX_STATE_STOPPING", 2);
    expect(applyEvent(current, changed(stale), emptyFilter())).toBe(current);
    // A new generation wins even with an older clock.
    const moved = { ...stale, generation: "2" };
    expect(applyEvent(current, changed(moved), emptyFilter())[0].state).toBe("SANDBOX_STATE_STOPPING");
  });

  it("ignores events without a sandbox", () => {
    expect(applyEvent(rows, { kind: "SANDBOX_EVENT_KIND_BROWSER_CRASHED" }, emptyFilter())).toBe(rows);
  });

  it("keeps a thousand rows quick", () => {
    let big = Array.from({ length: 1000 }, (_, i) => sbx(`s${i}`, 2000 - i));
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) big = applyEvent(big, changed(later(big[i], "SANDBOX_STATE_PAUSED")), emptyFilter());
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(countByState(big)).toEqual({ SANDBOX_STATE_PAUSED: 1000 });
  });
});

describe("pages", () => {
  it("appends a page, keeping fresher rows from events and the list order", () => {
    const fromEvent = later(sbx("b", 20), "SANDBOX_STATE_PAUSED");
    const rows = [sbx("c", 30), fromEvent];
    const merged = mergePage(rows, [sbx("b", 20), sbx("a", 10)]);
    expect(ids(merged)).toEqual(["c", "b", "a"]);
    expect(merged[1].state).toBe("SANDBOX_STATE_PAUSED");
    // An event row that came before the first page lands in order.
    expect(ids(mergePage([sbx("x", 15)], [sbx("c", 30), sbx("a", 10)]))).toEqual(["c", "x", "a"]);
    const same = [sbx("c", 30)];
    expect(mergePage(same, [sbx("c", 30)])).toBe(same);
  });
});

describe("the filter in the address", () => {
  it("round-trips", () => {
    const f: ListFilter = { states: ["SANDBOX_STATE_RUNNING"], labels: { team: "ml" }, metadata: { "user id": "a=b c" } };
    const q = filterToQuery(f);
    expect(q).toBe("?state=running&label=team%3Dml&metadata=user+id%3Da%3Db+c");
    expect(filterFromQuery(q)).toEqual(f);
    expect(filterToQuery(emptyFilter())).toBe("");
  });

  it("drops what it cannot read", () => {
    expect(filterFromQuery("?state=bogus&state=paused&state=paused&label=novalue&metadata==x")).toEqual({
      states: ["SANDBOX_STATE_PAUSED"],
      labels: {},
      metadata: {},
    });
  });
});
