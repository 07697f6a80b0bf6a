import { expect, test } from "bun:test";
import { ClockControl, type EngineProbe } from "../../src/control/clock-control.ts";
import { ManualClock } from "../../src/core/clock.ts";

/** An engine with nothing to do, except what a test puts in flight. */
function fakeEngine() {
  let idleWaiters: Array<() => void> = [];
  const d = {
    workQueued: false,
    passPending: false,
    inFlightCount: 0,
    dispatchedCount: 0,
    isIdle: () => d.inFlightCount === 0,
    whenPassed: async () => {},
    whenIdle: () => (d.inFlightCount === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r))),
    finish() {
      d.inFlightCount--;
      if (d.inFlightCount === 0) for (const r of idleWaiters.splice(0)) r();
    },
  };
  return d satisfies EngineProbe;
}

test("a real clock cannot be advanced: 409", async () => {
  const { RealClock } = await import("../../src/core/clock.ts");
  const control = new ClockControl(new RealClock(), fakeEngine());
  await expect(control.advance({ ms: 1, flush: false, timeoutMs: 100 })).rejects.toMatchObject({ status: 409 });
});

test("a jump past a once-a-second housekeeping timer for a whole day stays cheap", async () => {
  const clock = new ManualClock(0);
  let ticks = 0;
  const tick = () => {
    ticks++;
    clock.at(clock.now() + 1000, tick);
  };
  clock.at(1000, tick);
  const control = new ClockControl(clock, fakeEngine());
  // Cheap means no turn of the event loop per tick (a setImmediate, a round trip to the workers):
  // count the turns the jump takes instead of timing it.
  let turns = 0;
  let counting = true;
  const countTurn = () => {
    turns++;
    if (counting) setImmediate(countTurn);
  };
  setImmediate(countTurn);
  const res = await control.advance({ ms: 86_400_000, flush: true, timeoutMs: 5000 });
  counting = false;
  expect(ticks).toBe(86_400);
  expect(res).toEqual({ now: 86_400_000, mode: "manual", timersFired: 86_400, idle: true });
  expect(turns).toBeLessThan(10);
});

test("an attempt a worker holds for a later instant: that instant becomes a step, and flush waits for it there", async () => {
  const clock = new ManualClock(0);
  const d = fakeEngine();
  d.inFlightCount = 1;
  d.dispatchedCount = 1;
  // The worker releases the held attempt when it hears the time reach 5000, and it finishes.
  let workerNow = 0;
  let finishedAt = null as number | null;
  clock.onAdvance((now) => {
    workerNow = now;
    if (now >= 5000 && finishedAt === null) {
      finishedAt = now;
      queueMicrotask(() => d.finish());
    }
  });
  const workerWaits = async () => (finishedAt === null ? { parked: 1, nextAt: 5000 } : { parked: 0, nextAt: null });
  const control = new ClockControl(clock, d, workerWaits);
  const res = await control.advance({ ms: 60_000, flush: true, timeoutMs: 2000 });
  expect(finishedAt).toBe(5000);
  expect(workerNow).toBe(60_000);
  expect(res).toMatchObject({ now: 60_000, idle: true });
});

test("flush waits when the last attempt ends during the round trip to the workers and leaves a pass to run", async () => {
  const d = fakeEngine();
  d.inFlightCount = 1;
  d.dispatchedCount = 1;
  let passes = 0;
  d.isIdle = () => d.inFlightCount === 0 && !d.passPending;
  d.whenIdle = () =>
    new Promise<void>((resolve) => {
      // The pass that the recorded outcome asked for runs and finds nothing more to do.
      if (d.passPending) queueMicrotask(() => ((d.passPending = false), passes++, resolve()));
    });
  // While the workers are asked, the attempt's outcome is recorded: nothing in flight, but what
  // follows it (a callback, the next step) is stored and a claim pass is scheduled.
  const workerWaits = async () => {
    d.inFlightCount = 0;
    d.passPending = true;
    return { parked: 0, nextAt: null };
  };
  const control = new ClockControl(new ManualClock(0), d, workerWaits);
  expect(await control.flush(1000)).toBe(true);
  expect(passes).toBe(1);
});

test("flush gives up at the timeout when an attempt never finishes, yet the jump completes", async () => {
  const clock = new ManualClock(0);
  const d = fakeEngine();
  d.inFlightCount = 1;
  const control = new ClockControl(clock, d);
  const res = await control.advance({ ms: 1000, flush: true, timeoutMs: 50 });
  expect(res).toMatchObject({ now: 1000, idle: false });
});

test("rate windows: only lanes at their rate (or paused) hold attempts for later; the earliest release is next", async () => {
  const { rateWindowWaits } = await import("../../src/control/worker-waits.ts");
  const waits = rateWindowWaits(async () => [
    { waiting: 2, active: 0, rate: 1, rateCount: 1, periodStart: 1000, periodMs: 3600_000, paused: false },
    { waiting: 1, active: 0, rate: 5, rateCount: 5, periodStart: 2000, periodMs: 60_000, paused: false },
    { waiting: 4, active: 1, rate: undefined, rateCount: 0, periodStart: 0, periodMs: 1000, paused: false },
    { waiting: 3, active: 0, rate: 10, rateCount: 2, periodStart: 0, periodMs: 1000, paused: false },
    // A paused lane holds its attempts until a resume: parked, at no instant.
    { waiting: 5, active: 0, rate: 1, rateCount: 1, periodStart: 500, periodMs: 1000, paused: true },
  ]);
  expect(await waits()).toEqual({ parked: 8, nextAt: 62_000 });
  expect(await rateWindowWaits(async () => [])()).toEqual({ parked: 0, nextAt: null });
});
