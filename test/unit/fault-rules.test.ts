import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { FaultRules } from "../../src/faults/rules.ts";

const rulesAt = () => new FaultRules({ clock: new ManualClock(1_000), log: silentLogger });
const hit = { path: "/v2/publish/x", method: "POST" };
const fires = (rules: FaultRules, n: number, account = "a") => Array.from({ length: n }, () => rules.forRequest(account, hit)?.kind ?? null);

test("a seeded probability rule fires on the same matches every time; another seed on others", () => {
  const run = (seed: number) => {
    const rules = rulesAt();
    rules.add("a", { kind: "error", probability: 0.3, seed });
    return fires(rules, 200).map((k) => k !== null);
  };
  const first = run(7);
  expect(run(7)).toEqual(first);
  expect(run(8)).not.toEqual(first);
  const share = first.filter(Boolean).length / first.length;
  expect(share).toBeGreaterThan(0.15);
  expect(share).toBeLessThan(0.45);
});

test("every Nth match, the next N matches, and always", () => {
  const every = rulesAt();
  every.add("a", { kind: "error", every: 3 });
  expect(fires(every, 7)).toEqual([null, null, "error", null, null, "error", null]);
  const times = rulesAt();
  const rule = times.add("a", { kind: "quota", times: 2 });
  expect(fires(times, 4)).toEqual(["quota", "quota", null, null]);
  expect(times.list("a")[0]).toMatchObject({ id: rule.id, fired: 2, matched: 2 });
  const always = rulesAt();
  always.add("a", { kind: "slow", delayMs: 5 });
  expect(fires(always, 2)).toEqual(["slow", "slow"]);
});

test("rules are tried in order, the first that fires applies; accounts, kinds and matches are kept apart", () => {
  const rules = rulesAt();
  rules.add("a", { kind: "quota", times: 1, match: { route: "/v2/publish" } });
  rules.add("a", { kind: "error", match: { method: "post" } });
  rules.add("a", { kind: "duplicate" });
  expect(fires(rules, 2)).toEqual(["quota", "error"]);
  expect(rules.forRequest("a", { path: "/v2/queues", method: "GET" })).toBeUndefined();
  expect(fires(rules, 1, "b")).toEqual([null]);
  expect(rules.forDelivery("a", { url: "http://x" })?.kind).toBe("duplicate");
  expect(rules.injectedCounts()).toEqual([["quota", 1], ["error", 1], ["duplicate", 1]]);
});

test("delivery matches: URL prefix, label, flow-control key, queue", () => {
  const rules = rulesAt();
  rules.add("a", { kind: "delay", delayMs: 1, match: { url: "https://api.example.com/", label: "billing", flowControlKey: "k", queue: "q" } });
  const facts = { url: "https://api.example.com/hook", labels: ["x", "billing"], flowControlKey: "k", queue: "q" };
  expect(rules.forDelivery("a", facts)?.kind).toBe("delay");
  for (const other of [{ url: "https://example.com/hook" }, { labels: ["x"] }, { flowControlKey: "j" }, { queue: undefined }])
    expect(rules.forDelivery("a", { ...facts, ...other })).toBeUndefined();
});

test("an unworkable rule is refused; clear and remove", () => {
  const rules = rulesAt();
  expect(() => rules.add("a", { kind: "delay" })).toThrow("delayMs");
  expect(() => rules.add("a", { kind: "duplicate", match: { route: "/v2" } })).toThrow("matches deliveries");
  const r = rules.add("a", { kind: "error", probability: 0.5 });
  expect(r.seed).toBeGreaterThanOrEqual(0);
  rules.add("a", { kind: "quota" });
  rules.remove("a", r.id);
  expect(() => rules.remove("a", r.id)).toThrow("not found");
  expect(rules.clear("a")).toBe(1);
  expect(rules.empty).toBe(true);
});
