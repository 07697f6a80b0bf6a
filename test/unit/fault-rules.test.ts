import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { FaultRules } from "../../src/faults/rules.ts";
import type { FaultRuleInput } from "../../src/faults/model.ts";
import type { SqliteStorage } from "../../src/engines/engine.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";

const engines = new WeakMap<FaultRules, SqliteStorage>();
/** Rules stored in an in-memory SQLite, as a server keeps them. */
const rulesAt = async () => {
  const engine = openSqliteEngine({ path: null, busyTimeoutMs: 0, log: silentLogger });
  const clock = new ManualClock(1_000);
  const rules = await FaultRules.load({ clock, log: silentLogger, store: engine.stores.faults });
  engines.set(rules, engine);
  return rules;
};
/** Adds a rule in a write of its own, as the route does. */
const add = (rules: FaultRules, accountId: string, input: FaultRuleInput) =>
  engines.get(rules)!.commit.run((tx) => rules.add(tx, accountId, input));
const hit = { path: "/v2/publish/x", method: "POST" };
const fires = (rules: FaultRules, n: number, account = "a") => Array.from({ length: n }, () => rules.forRequest(account, hit)?.kind ?? null);

test("a seeded probability rule fires on the same matches every time; another seed on others", async () => {
  const run = async (seed: number) => {
    const rules = await rulesAt();
    await add(rules, "a", { kind: "error", probability: 0.3, seed });
    return fires(rules, 200).map((k) => k !== null);
  };
  const first = await run(7);
  expect(await run(7)).toEqual(first);
  expect(await run(8)).not.toEqual(first);
  const share = first.filter(Boolean).length / first.length;
  expect(share).toBeGreaterThan(0.15);
  expect(share).toBeLessThan(0.45);
});

test("every Nth match, the next N matches, and always", async () => {
  const every = await rulesAt();
  await add(every, "a", { kind: "error", every: 3 });
  expect(fires(every, 7)).toEqual([null, null, "error", null, null, "error", null]);
  const times = await rulesAt();
  const rule = await add(times, "a", { kind: "quota", times: 2 });
  expect(fires(times, 4)).toEqual(["quota", "quota", null, null]);
  expect(times.list("a")[0]).toMatchObject({ id: rule.id, fired: 2, matched: 2 });
  const always = await rulesAt();
  await add(always, "a", { kind: "slow", delayMs: 5 });
  expect(fires(always, 2)).toEqual(["slow", "slow"]);
});

test("rules are tried in order, the first that fires applies; accounts, kinds and matches are kept apart", async () => {
  const rules = await rulesAt();
  await add(rules, "a", { kind: "quota", times: 1, match: { route: "/v2/publish" } });
  await add(rules, "a", { kind: "error", match: { method: "post" } });
  await add(rules, "a", { kind: "duplicate" });
  expect(fires(rules, 2)).toEqual(["quota", "error"]);
  expect(rules.forRequest("a", { path: "/v2/queues", method: "GET" })).toBeUndefined();
  expect(fires(rules, 1, "b")).toEqual([null]);
  expect(rules.forDelivery("a", { url: "http://x" })?.kind).toBe("duplicate");
  expect(rules.injectedCounts()).toEqual([["quota", 1], ["error", 1], ["duplicate", 1]]);
});

test("delivery matches: URL prefix, label, flow-control key, queue", async () => {
  const rules = await rulesAt();
  const match = { url: "https://api.example.com/", label: "billing", flowControlKey: "k", queue: "q" };
  await add(rules, "a", { kind: "delay", delayMs: 1, match });
  const facts = { url: "https://api.example.com/hook", labels: ["x", "billing"], flowControlKey: "k", queue: "q" };
  expect(rules.forDelivery("a", facts)?.kind).toBe("delay");
  for (const other of [{ url: "https://example.com/hook" }, { labels: ["x"] }, { flowControlKey: "j" }, { queue: undefined }])
    expect(rules.forDelivery("a", { ...facts, ...other })).toBeUndefined();
});

test("an unworkable rule is refused; clear and remove", async () => {
  const rules = await rulesAt();
  await expect(add(rules, "a", { kind: "delay" })).rejects.toThrow("delayMs");
  await expect(add(rules, "a", { kind: "duplicate", match: { route: "/v2" } })).rejects.toThrow("matches deliveries");
  const r = await add(rules, "a", { kind: "error", probability: 0.5 });
  expect(r.seed).toBeGreaterThanOrEqual(0);
  await add(rules, "a", { kind: "quota" });
  const { commit } = engines.get(rules)!;
  await commit.run((tx) => rules.remove(tx, "a", r.id));
  await expect(commit.run((tx) => rules.remove(tx, "a", r.id))).rejects.toThrow("not found");
  expect(await commit.run((tx) => rules.clear(tx, "a"))).toBe(1);
  expect(rules.empty).toBe(true);
});
