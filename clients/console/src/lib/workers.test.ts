import { describe, expect, it } from "vitest";
import type { Worker } from "../api/admin";
import { eligibleWorkers, free, moveCause, moveChoices, num, share, sortWorkers, usedOf, workerState } from "./workers";

const w = (id: string, state: Worker["state"], cap: [number, number, number], used: [number, number, number]): Worker => ({
  workerId: id,
  state,
  capacity: { cpuMillis: String(cap[0]), memoryMib: String(cap[1]), sandboxes: String(cap[2]) },
  allocated: { cpuMillis: String(used[0]), memoryMib: String(used[1]), sandboxes: String(used[2]) },
});

describe("capacity math", () => {
  it("reads the API's 64-bit strings", () => {
    expect(num("4000")).toBe(4000);
    expect(num(undefined)).toBe(0);
    expect(num("x")).toBe(0);
  });

  it("computes what is left, never below zero", () => {
    expect(free(w("a", "WORKER_STATE_ACTIVE", [4000, 8192, 10], [1000, 9000, 3]))).toEqual({
      cpuMillis: 3000,
      memoryMib: 0,
      sandboxes: 7,
    });
  });

  it("bounds a bar's share", () => {
    expect(share(1, 4)).toBe(0.25);
    expect(share(5, 4)).toBe(1);
    expect(share(0, 0)).toBe(0);
    expect(share(1, 0)).toBe(1);
  });

  it("says used of total", () => {
    expect(usedOf("cpuMillis", 1500, 4000)).toBe("1.5 / 4 CPU");
    expect(usedOf("memoryMib", 512, 8192)).toBe("512 MiB / 8 GiB");
    expect(usedOf("sandboxes", 3, 500)).toBe("3 / 500");
  });

  it("labels states", () => {
    expect(workerState("WORKER_STATE_LOST")).toEqual({ label: "Lost", tone: "bad" });
    expect(workerState(undefined).label).toBe("Unknown");
  });
});

describe("which workers may take a sandbox", () => {
  const workers = [
    w("cur", "WORKER_STATE_ACTIVE", [4000, 8192, 10], [0, 0, 0]),
    w("ok", "WORKER_STATE_ACTIVE", [4000, 8192, 10], [1000, 1024, 2]),
    w("drain", "WORKER_STATE_DRAINING", [4000, 8192, 10], [0, 0, 0]),
    w("lost", "WORKER_STATE_LOST", [4000, 8192, 10], [0, 0, 0]),
    w("full", "WORKER_STATE_ACTIVE", [4000, 8192, 2], [0, 0, 2]),
    w("cpu", "WORKER_STATE_ACTIVE", [1000, 8192, 10], [900, 0, 1]),
    w("mem", "WORKER_STATE_ACTIVE", [4000, 1024, 10], [0, 1000, 1]),
  ];

  it("keeps the active ones with room, not the current one", () => {
    const need = { cpuMillis: 250, memoryMib: 256 };
    expect(eligibleWorkers(workers, "cur", need).map((x) => x.workerId)).toEqual(["ok"]);
    expect(Object.fromEntries(moveChoices(workers, "cur", need).map((c) => [c.worker.workerId, c.reason]))).toEqual({
      cur: "holds it now",
      ok: "",
      drain: "draining, not active",
      lost: "lost, not active",
      full: "no room for another sandbox",
      cpu: "not enough cpu left",
      mem: "not enough memory left",
    });
  });

  it("without knowing the sandbox, keeps every active worker with a free slot", () => {
    expect(eligibleWorkers(workers, undefined, { cpuMillis: 0, memoryMib: 0 }).map((x) => x.workerId)).toEqual([
      "cur",
      "ok",
      "cpu",
      "mem",
    ]);
  });
});

describe("order", () => {
  it("puts live workers first", () => {
    const ws = [
      w("z", "WORKER_STATE_OFFLINE", [0, 0, 0], [0, 0, 0]),
      w("y", "WORKER_STATE_LOST", [0, 0, 0], [0, 0, 0]),
      w("b", "WORKER_STATE_ACTIVE", [0, 0, 0], [0, 0, 0]),
      w("x", "WORKER_STATE_DRAINING", [0, 0, 0], [0, 0, 0]),
      w("a", "WORKER_STATE_ACTIVE", [0, 0, 0], [0, 0, 0]),
    ];
    expect(sortWorkers(ws).map((x) => x.workerId)).toEqual(["a", "b", "x", "y", "z"]);
  });
});

describe("the failover history", () => {
  it("says why a sandbox moved, and shows a cause it does not know as it is", () => {
    expect(moveCause("SANDBOX_MOVE_CAUSE_REASSIGNED")).toBe("Moved by hand");
    expect(moveCause("SANDBOX_MOVE_CAUSE_WORKER_LOST")).toBe("Worker lost");
    expect(moveCause("SANDBOX_MOVE_CAUSE_NOT_HELD")).toBe("Worker no longer held it");
    expect(moveCause("SANDBOX_MOVE_CAUSE_FENCED")).toBe("Fenced, started again");
    expect(moveCause("SANDBOX_MOVE_CAUSE_LATER")).toBe("SANDBOX_MOVE_CAUSE_LATER");
    expect(moveCause(undefined)).toBe("Not recorded");
  });
});
