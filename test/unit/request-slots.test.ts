import { expect, test } from "bun:test";
import { RequestSlots } from "../../src/delivery/request-slots.ts";
import { waitUntil } from "../helpers/wait.ts";

/** A request that ends when told, recording when it started. */
function pending(log: string[], name: string) {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return {
    request: () => {
      log.push(name);
      return done.then(() => name);
    },
    end: () => end(),
  };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

test("at most `limit` requests under way; the others start in order as slots free up", async () => {
  let now = 0;
  const slots = new RequestSlots(2, 1000, () => now);
  const started: string[] = [];
  const reqs = ["a", "b", "c", "d"].map((n) => pending(started, n));
  const results = reqs.map((r) => slots.run(r.request));
  await tick();
  expect(started).toEqual(["a", "b"]);
  expect(slots.queued).toBe(2);
  reqs[1]!.end();
  await tick();
  expect(started).toEqual(["a", "b", "c"]);
  reqs[0]!.end();
  reqs[2]!.end();
  await tick();
  expect(started).toEqual(["a", "b", "c", "d"]);
  reqs[3]!.end();
  expect(await Promise.all(results)).toEqual(["a", "b", "c", "d"]);
});

test("a failed request gives its slot back", async () => {
  const slots = new RequestSlots(1, 1000);
  await expect(slots.run(() => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
  expect(await slots.run(() => Promise.resolve("next"))).toBe("next");
});

test("a request under way longer than slowMs stops holding back the ones waiting", async () => {
  let now = 0;
  const slots = new RequestSlots(1, 50, () => now);
  const started: string[] = [];
  const slow = pending(started, "slow");
  const next = pending(started, "next");
  void slots.run(slow.request);
  const second = slots.run(next.request);
  await tick();
  expect(started).toEqual(["slow"]);
  now = 60;
  // The timer armed for the moment the first request turns slow lets the second one start.
  await waitUntil(() => started.length === 2, { what: "the waiting request to start" });
  expect(started).toEqual(["slow", "next"]);
  next.end();
  slow.end();
  expect(await second).toBe("next");
});

test("start: the same slots without a promise per request; a throwing or failing request gives its slot back", async () => {
  let now = 0;
  const slots = new RequestSlots(1, 1000, () => now);
  const started: string[] = [];
  const a = pending(started, "a");
  const b = pending(started, "b");
  slots.start(a.request);
  slots.start(() => {
    started.push("throws");
    throw new Error("bad header");
  });
  slots.start(() => {
    started.push("rejects");
    return Promise.reject(new Error("refused"));
  });
  slots.start(b.request);
  await tick();
  expect(started).toEqual(["a"]);
  expect(slots.queued).toBe(3);
  a.end();
  await waitUntil(() => started.length === 4, { what: "the queued requests to start in order" });
  expect(started).toEqual(["a", "throws", "rejects", "b"]);
  expect(slots.queued).toBe(0);
  b.end();
  expect(await slots.run(() => Promise.resolve("next"))).toBe("next");
});
