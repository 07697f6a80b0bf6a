import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";

const HOUR = 3600_000;

test("one jump fires a self re-arming hourly timer 24 times, each at its own instant", () => {
  const clock = new ManualClock(0);
  const seen: number[] = [];
  const arm = () =>
    clock.at((Math.floor(clock.now() / HOUR) + 1) * HOUR, () => {
      seen.push(clock.now());
      arm();
    });
  arm();
  clock.advanceTo(24 * HOUR);
  expect(seen).toEqual(Array.from({ length: 24 }, (_, i) => (i + 1) * HOUR));
  expect(clock.now()).toBe(24 * HOUR);
});

test("timers fire in time order, ties in arming order, and listeners hear the end of the jump", () => {
  const clock = new ManualClock(1000);
  const order: string[] = [];
  clock.at(3000, () => order.push("c"));
  clock.at(2000, () => order.push("a"));
  clock.at(2000, () => order.push("b"));
  clock.at(9000, () => order.push("late"));
  const heard: number[] = [];
  clock.onAdvance((now) => heard.push(now));
  clock.advanceTo(5000);
  expect(order).toEqual(["a", "b", "c"]);
  expect(heard).toEqual([5000]);
});

test("fireNext steps one timer at a time and never past the limit; the clock never goes backward", () => {
  const clock = new ManualClock(0);
  const cancel = clock.at(50, () => {});
  clock.at(100, () => {});
  cancel();
  expect(clock.fireNext(99)).toBe(false);
  expect(clock.now()).toBe(0);
  expect(clock.fireNext(100)).toBe(true);
  expect(clock.now()).toBe(100);
  expect(() => clock.advanceTo(50)).toThrow(RangeError);
});
