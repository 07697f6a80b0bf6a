import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import type { DeliveryJob } from "../../src/delivery/worker-protocol.ts";
import { FlowGate } from "../../src/flow-control/gate.ts";
import { GlobalSlots, globalSlotsInUse, globalSlotsLayout } from "../../src/flow-control/global-slots.ts";
import type { FlowControl } from "../../src/model/message.ts";
import { waitUntil } from "../helpers/wait.ts";

const KEY = "acc/k";
const T0 = 1_800_000_000_000;

/** A gate whose deliveries last until the test ends them, on a manual clock. */
function harness(global = new GlobalSlots()) {
  const clock = new ManualClock(T0);
  const running = new Map<number, () => void>();
  const started: number[] = [];
  const gate = new FlowGate(
    clock,
    (job) =>
      new Promise<void>((resolve) => {
        started.push(job.ticket);
        running.set(job.ticket, resolve);
      }),
    global,
  );
  let ticket = 0;
  const submit = (flow: Omit<FlowControl, "key">, key = KEY) => {
    const job = { ticket: ++ticket, messageId: `msg_${ticket}`, flow: { key, ...flow } } as DeliveryJob & { flow: FlowControl };
    gate.submit(job);
    return job.ticket;
  };
  /** Ends a running delivery and lets the gate react. */
  const finish = async (t: number) => {
    running.get(t)!();
    running.delete(t);
    await Bun.sleep(0);
  };
  const stats = () => gate.stats({ key: KEY })[0];
  return { clock, gate, submit, finish, started, running, stats };
}

describe("flow gate: pause", () => {
  test("a paused key starts nothing; its jobs wait in order and start on resume", () => {
    const h = harness();
    h.gate.steer({ key: KEY, steering: { paused: true, pins: {} } });
    for (let i = 0; i < 3; i++) h.submit({ periodMs: 1000, parallelism: 5 });
    expect(h.started).toEqual([]);
    expect(h.stats()).toMatchObject({ waiting: 3, active: 0, paused: true });
    h.gate.steer({ key: KEY, steering: { paused: false, pins: {} } });
    expect(h.started).toEqual([1, 2, 3]);
  });

  test("pausing lets what runs finish and starts nothing new; the rate period keeps running", async () => {
    const h = harness();
    for (let i = 0; i < 4; i++) h.submit({ periodMs: 60_000, rate: 2, parallelism: 1 });
    expect(h.started).toEqual([1]);
    h.gate.steer({ key: KEY, steering: { paused: true, pins: {} } });
    await h.finish(1);
    expect(h.started).toEqual([1]);
    expect(h.stats()).toMatchObject({ waiting: 3, active: 0, rateCount: 1 });
    // The period ran on while paused: after it, the counted start is gone.
    h.clock.advanceTo(T0 + 60_000);
    expect(h.stats()!.rateCount).toBe(0);
    h.gate.steer({ key: KEY, steering: { paused: false, pins: {} } });
    expect(h.started).toEqual([1, 2]);
  });

  test("a paused key's lane survives being idle: jobs arriving later wait too", () => {
    const h = harness();
    h.gate.steer({ key: KEY, steering: { paused: true, pins: {} } });
    h.submit({ periodMs: 1000, parallelism: 1 });
    expect(h.started).toEqual([]);
    expect(h.gate.cancel(1)?.ticket).toBe(1);
    h.submit({ periodMs: 1000, parallelism: 1 });
    expect(h.started).toEqual([]);
  });
});

describe("flow gate: pins", () => {
  test("a pinned parallelism overrides what the messages carry, and unpinning gives it back", async () => {
    const h = harness();
    h.gate.steer({ key: KEY, steering: { paused: false, pins: { parallelism: 1 } } });
    for (let i = 0; i < 3; i++) h.submit({ periodMs: 1000, parallelism: 5 });
    expect(h.started).toEqual([1]);
    expect(h.stats()).toMatchObject({ parallelism: 1, active: 1, waiting: 2 });
    await h.finish(1);
    expect(h.started).toEqual([1, 2]);
    h.gate.steer({ key: KEY, steering: { paused: false, pins: {} } });
    expect(h.started).toEqual([1, 2, 3]);
    expect(h.stats()!.parallelism).toBe(5);
  });

  test("a pinned rate and period override the messages', and a pin can start a new window", () => {
    const h = harness();
    for (let i = 0; i < 5; i++) h.submit({ periodMs: 1000, rate: 100 });
    expect(h.started).toHaveLength(5);
    h.gate.steer({ key: KEY, steering: { paused: false, pins: { rate: 1, periodMs: 3_600_000 } } });
    for (let i = 0; i < 2; i++) h.submit({ periodMs: 1000, rate: 100 });
    // Five starts already count in the pinned hour: the new ones wait.
    expect(h.started).toHaveLength(5);
    expect(h.stats()).toMatchObject({ rate: 1, periodMs: 3_600_000, rateCount: 5, waiting: 2 });
    h.gate.steer({ key: KEY, steering: { paused: false, pins: { rate: 1, periodMs: 3_600_000 } }, resetWindow: true });
    expect(h.started).toHaveLength(6);
    h.clock.advanceTo(T0 + 3_600_000);
    expect(h.started).toHaveLength(7);
  });

  test("resetWindow: the rate count goes to 0 and the waiting job starts now", () => {
    const h = harness();
    for (let i = 0; i < 2; i++) h.submit({ periodMs: 3_600_000, rate: 1 });
    expect(h.started).toEqual([1]);
    h.gate.steer({ key: KEY, steering: { paused: false, pins: {} }, resetWindow: true });
    expect(h.started).toEqual([1, 2]);
    expect(h.stats()).toMatchObject({ rateCount: 1, periodStart: T0 });
  });

  test("starts handed over at start count in a new lane's window (a restart keeps the window)", () => {
    const h = harness();
    h.clock.advanceTo(T0 + 10_000);
    h.gate.steer({ key: KEY, steering: { paused: false, pins: {} }, starts: [T0] });
    h.submit({ periodMs: 60_000, rate: 1 });
    expect(h.started).toEqual([]);
    expect(h.stats()).toMatchObject({ rateCount: 1, periodStart: T0 });
    h.clock.advanceTo(T0 + 60_000);
    expect(h.started).toEqual([1]);
  });

  test("forget (an account reset) drops the steering and the rate window", () => {
    const h = harness();
    h.gate.steer({ key: KEY, steering: { paused: true, pins: { parallelism: 1 } } });
    h.submit({ periodMs: 1000, parallelism: 5 });
    h.submit({ periodMs: 1000, parallelism: 5 });
    expect(h.started).toEqual([]);
    h.gate.forget("acc/");
    expect(h.started).toEqual([1, 2]);
  });
});

describe("global parallelism", () => {
  test("an account's flow-controlled deliveries never exceed its global limit across keys; another account is not held", async () => {
    const layout = globalSlotsLayout(1, [{ accountId: "acc", max: 2 }, { accountId: "other", max: 2 }]);
    const slots = new GlobalSlots();
    slots.configure(layout, 0);
    const h = harness(slots);
    h.submit({ periodMs: 1000, parallelism: 5 }, "acc/a");
    h.submit({ periodMs: 1000, parallelism: 5 }, "acc/b");
    h.submit({ periodMs: 1000, parallelism: 5 }, "acc/c");
    h.submit({ periodMs: 1000, parallelism: 5 }, "other/a");
    expect(h.started).toEqual([1, 2, 4]);
    expect(globalSlotsInUse(layout, "acc")).toBe(2);
    await h.finish(1);
    expect(h.started).toEqual([1, 2, 4, 3]);
    expect(globalSlotsInUse(layout, "acc")).toBe(2);
    await h.finish(2);
    await h.finish(3);
    expect(globalSlotsInUse(layout, "acc")).toBe(0);
  });

  test("a slot given back by another worker wakes a waiting lane; a replaced worker gives back what its predecessor held", async () => {
    const layout = globalSlotsLayout(2, [{ accountId: "acc", max: 1 }]);
    const other = new GlobalSlots();
    other.configure(layout, 1);
    expect(other.take("acc")).toBe(true);
    const mine = new GlobalSlots();
    mine.configure(layout, 0);
    const h = harness(mine);
    h.submit({ periodMs: 1000, parallelism: 1 }, "acc/a");
    expect(h.started).toEqual([]);
    other.give("acc");
    await waitFor(() => h.started.length === 1);
    // Worker 0 dies holding its slot; its replacement takes the same number and gives it back.
    new GlobalSlots().configure(layout, 0);
    expect(globalSlotsInUse(layout, "acc")).toBe(0);
  });
});

const waitFor = (check: () => boolean) => waitUntil(check, { intervalMs: 1, what: "the gate to start the job" });
