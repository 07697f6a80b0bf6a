import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { FaultRules } from "../../src/faults/rules.ts";
import type { FaultRuleInput } from "../../src/faults/model.ts";
import type { SqliteStorage } from "../../src/engines/engine.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";

const engines = new WeakMap<FaultRules, SqliteStorage>();
/** Rules stored in an in-memory SQLite, as a server keeps them. */
const rulesAt = () => {
  const engine = openSqliteEngine({ path: null, busyTimeoutMs: 0, log: silentLogger });
  const rules = new FaultRules({ clock: new ManualClock(1_000), log: silentLogger, store: engine.stores.faults, commit: engine.commit });
  engines.set(rules, engine);
  return rules;
};
/** Adds a rule in a write of its own, as the route does. */
const add = (rules: FaultRules, accountId: string, input: FaultRuleInput) => engines.get(rules)!.commit.nested(() => rules.add(accountId, input));
const hit = { path: "/v2/publish/x", method: "POST" };
const fires = (rules: FaultRules, n: number, account = "a") => Array.from({ length: n }, () => rules.forRequest(account, hit)?.kind ?? null);

test("a seeded probability rule fires on the same matches every time; another seed on others", () => {
  const run = (seed: number) => {
    const rules = rulesAt();
    add(rules, "a", { kind: "error", probability: 0.3, seed });
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
  add(every, "a", { kind: "error", every: 3 });
  expect(fires(every, 7)).toEqual([null, null, "error", null, null, "error", null]);
  const times = rulesAt();
  const rule = add(times, "a", { kind: "quota", times: 2 });
  expect(fires(times, 4)).toEqual(["quota", "quota", null, null]);
  expect(times.list("a")[0]).toMatchObject({ id: rule.id, fired: 2, matched: 2 });
  const always = rulesAt();
  add(always, "a", { kind: "slow", delayMs: 5 });
  expect(fires(always, 2)).toEqual(["slow", "slow"]);
});

test("rules are tried in order, the first that fires applies; accounts, kinds and matches are kept apart", () => {
  const rules = rulesAt();
  add(rules, "a", { kind: "quota", times: 1, match: { route: "/v2/publish" } });
  add(rules, "a", { kind: "error", match: { method: "post" } });
  add(rules, "a", { kind: "duplicate" });
  expect(fires(rules, 2)).toEqual(["quota", "error"]);
  expect(rules.forRequest("a", { path: "/v2/queues", method: "GET" })).toBeUndefined();
  expect(fires(rules, 1, "b")).toEqual([null]);
  expect(rules.forDelivery("a", { url: "http://x" })?.kind).toBe("duplicate");
  expect(rules.injectedCounts()).toEqual([["quota", 1], ["error", 1], ["duplicate", 1]]);
});

test("delivery matches: URL prefix, label, flow-control key, queue", () => {
  const rules = rulesAt();
  add(rules, "a", { kind: "delay", delayMs: 1, match: { url: "https://api.example.com/", label: "billing", flowControlKey: "k", queue: "q" } });
  const facts = { url: "https://api.example.com/hook", labels: ["x", "billing"], flowControlKey: "k", queue: "q" };
  expect(rules.forDelivery("a", facts)?.kind).toBe("delay");
  for (const other of [{ url: "https://example.com/hook" }, { labels: ["x"] }, { flowControlKey: "j" }, { queue: undefined }])
    expect(rules.forDelivery("a", { ...facts, ...other })).toBeUndefined();
});

test("an unworkable rule is refused; clear and remove", () => {
  const rules = rulesAt();
  expect(() => add(rules, "a", { kind: "delay" })).toThrow("delayMs");
  expect(() => add(rules, "a", { kind: "duplicate", match: { route: "/v2" } })).toThrow("matches deliveries");
  const r = add(rules, "a", { kind: "error", probability: 0.5 });
  expect(r.seed).toBeGreaterThanOrEqual(0);
  add(rules, "a", { kind: "quota" });
  const { commit } = engines.get(rules)!;
  commit.nested(() => rules.remove("a", r.id));
  expect(() => commit.nested(() => rules.remove("a", r.id))).toThrow("not found");
  expect(commit.nested(() => rules.clear("a"))).toBe(1);
  expect(rules.empty).toBe(true);
});
