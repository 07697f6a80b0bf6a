import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_PLANS } from "../../src/config/plans.ts";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { PERIOD_NAMES } from "../../src/metrics/time.ts";
import {
  expectDailySeries, expectJsonError, expectPeriodSeries, jsonInit, parseX, VECTOR_STATS_FIELDS, type Point,
} from "../helpers/management.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const NOW = Date.UTC(2026, 10, 22, 10, 17, 30, 250); // Sunday
const MIN = 60_000;
const DAY = 86_400_000;
const TODAY = Date.UTC(2026, 10, 22);

const VECTOR_INDEX_FIELDS = [
  "customer_id", "id", "name", "similarity_function", "dimension_count", "endpoint", "token", "read_only_token",
  "type", "region", "max_vector_count", "max_daily_updates", "max_daily_queries", "max_monthly_bandwidth",
  "max_writes_per_second", "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
  "max_total_metadata_size", "creation_time",
];

const ALICE = {
  email: "alice@example.com", apiKey: "alice-key", userId: "alice", token: "alice-token", plan: "payg" as const,
  vectorIndexes: [
    { name: "embeddings", region: "eu-west-1", similarityFunction: "COSINE", dimensionCount: 1536 },
    { name: "quiet", region: "us-central1", similarityFunction: "DOT_PRODUCT", dimensionCount: 8, type: "free" },
    { name: "seeded", region: "us-central1", similarityFunction: "EUCLIDEAN", dimensionCount: 8 },
  ],
  vectorUsage: [
    { index: "seeded", ago: "2m", queries: 4, vectorCount: 900, dataSize: 12_345 },
    { index: "seeded", ago: "1d", updates: 6 },
  ],
};
const BOB = {
  email: "bob@example.com", apiKey: "bob-key", userId: "bob", token: "bob-token",
  vectorIndexes: [{ name: "bobs", region: "eu-west-1", similarityFunction: "COSINE", dimensionCount: 3 }],
};
const configFile: ConfigFile = { accounts: [ALICE, BOB] };

type Index = Record<string, unknown> & { id: string; name: string; token: string };
// Fields are picked by name in loops; Point annotations keep the rest typed.
type Stats = Record<string, any> & { days: string[] };

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ configFile, clock: new ManualClock(NOW) });
});
afterAll(() => s.stop());

const indexes = async (as: { email: string; apiKey: string } = ALICE) =>
  (await (await s.mgmt("/v2/vector/index", { email: as.email, apiKey: as.apiKey })).json()) as Index[];
const idOf = async (name: string) => (await indexes()).find((i) => i.name === name)!.id;
const stats = async (id: string, period?: string) =>
  (await (await s.mgmt(`/v2/vector/index/${id}/stats${period ? `?period=${period}` : ""}`)).json()) as Stats;
const record = (id: string, samples: unknown[], token = ALICE.token) =>
  s.api(`/__svc/usage/vector/${id}`, { ...jsonInit("POST", { samples }), token });

const PERIOD_SERIES = [
  "query_throughput", "update_throughput", "query_latency_mean", "query_latency_99", "update_latency_mean",
  "update_latency_99", "embeds_latency_mean", "embeds_latency_99", "vector_count", "data_size",
  "rerank_latency_mean", "rerank_latency_99",
];
const DAILY_SERIES = ["daily_update_requests", "daily_query_requests", "daily_bandwidths", "daily_rerank_requests"];

describe("vector indexes", () => {
  test("list answers the caller's indexes, hosted-service fields in order, plan defaults", async () => {
    const list = await indexes();
    expect(list.map((i) => i.name)).toEqual(["embeddings", "quiet", "seeded"]);
    for (const index of list) expect(Object.keys(index)).toEqual(VECTOR_INDEX_FIELDS);
    expect(list[0]).toMatchObject({
      customer_id: ALICE.email, similarity_function: "COSINE", dimension_count: 1536, type: "payg", region: "eu-west-1",
      max_vector_count: DEFAULT_PLANS.payg.index.maxVectorCount, max_daily_queries: -1, creation_time: Math.floor(NOW / 1000),
    });
    expect(list[1]).toMatchObject({ type: "free", max_daily_queries: DEFAULT_PLANS.free.index.maxDailyQueries });
    expect((await indexes(BOB)).map((i) => i.name)).toEqual(["bobs"]);
  });

  test("create, get, rename, reset-password, delete", async () => {
    const created = await s.mgmt(
      "/v2/vector/index",
      jsonInit("POST", { name: "made", region: "eu-west-1", similarity_function: "EUCLIDEAN", dimension_count: 4 }),
    );
    expect(created.status).toBe(200);
    const index = (await created.json()) as Index;
    expect(Object.keys(index)).toEqual(VECTOR_INDEX_FIELDS);
    expect(index).toMatchObject({ name: "made", type: "payg", similarity_function: "EUCLIDEAN", dimension_count: 4 });
    expect(await (await s.mgmt(`/v2/vector/index/${index.id}`)).json()).toEqual(index);
    expect(await (await s.mgmt(`/v2/vector/index/${index.id}/rename`, jsonInit("POST", { name: "made2" }))).json()).toBe("OK");
    expect(await (await s.mgmt(`/v2/vector/index/${index.id}/reset-password`, { method: "POST" })).json()).toBe("OK");
    const after = (await (await s.mgmt(`/v2/vector/index/${index.id}`)).json()) as Index;
    expect(after.name).toBe("made2");
    expect(after.token).not.toBe(index.token);
    expect(await (await s.mgmt(`/v2/vector/index/${index.id}`, { method: "DELETE" })).json()).toBe("OK");
    await expectJsonError(await s.mgmt(`/v2/vector/index/${index.id}`), 404);
    await expectJsonError(await s.mgmt(`/v2/vector/index/${index.id}/stats`), 404);
  });

  test("bad create input → 400 naming the field", async () => {
    const base = { name: "v", region: "eu-west-1", similarity_function: "COSINE", dimension_count: 3 };
    const cases: Array<[unknown, string]> = [
      [{ ...base, similarity_function: "MANHATTAN" }, "similarity_function"],
      [{ ...base, dimension_count: 0 }, "dimension_count"],
      [{ ...base, dimension_count: 1.5 }, "dimension_count"],
      [{ ...base, region: "ap-south-1" }, "region"],
      [{ ...base, type: "enterprise" }, "type"],
      [{ name: "v", region: "eu-west-1", dimension_count: 3 }, "similarity_function"],
    ];
    for (const [body, field] of cases)
      expect(await expectJsonError(await s.mgmt("/v2/vector/index", jsonInit("POST", body)), 400)).toContain(field);
  });

  test("another account's index is 404 everywhere", async () => {
    const bobs = (await indexes(BOB))[0]!.id;
    await expectJsonError(await s.mgmt(`/v2/vector/index/${bobs}`), 404);
    await expectJsonError(await s.mgmt(`/v2/vector/index/${bobs}/stats`), 404);
    await expectJsonError(await s.mgmt(`/v2/vector/index/${bobs}`, { method: "DELETE" }), 404);
    await expectJsonError(await record(bobs, [{ queries: 1 }]), 404);
  });
});

describe("GET /v2/vector/index/{id}/stats", () => {
  test("an index with no usage answers zeros of the right shape, for every period", async () => {
    const id = await idOf("quiet");
    for (const period of PERIOD_NAMES) {
      const st = await stats(id, period);
      expect(Object.keys(st)).toEqual(VECTOR_STATS_FIELDS);
      for (const field of PERIOD_SERIES) {
        expectPeriodSeries(st[field]!, period, NOW);
        expect(st[field]!.every((p: Point) => p.y === 0)).toBe(true);
      }
      for (const field of DAILY_SERIES) {
        expectDailySeries(st[field]!, st.days, TODAY - 4 * DAY);
        expect(st[field]!.every((p: Point) => p.y === 0)).toBe(true);
      }
      for (const field of VECTOR_STATS_FIELDS.filter((f) => !PERIOD_SERIES.includes(f) && !DAILY_SERIES.includes(f) && f !== "days"))
        expect(st[field]).toBe(0);
    }
  });

  test("days: the last 5 weekday names, ending today", async () => {
    const st = await stats(await idOf("quiet"));
    expect(st.days).toEqual(["Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]);
  });

  test("missing period is 1h; anything else is 400", async () => {
    const st = await stats(await idOf("quiet"));
    expectPeriodSeries(st.query_throughput, "1h", NOW);
    const id = await idOf("quiet");
    for (const bad of ["2h", "1w", "", "1H"])
      expect(await expectJsonError(await s.mgmt(`/v2/vector/index/${id}/stats?period=${bad}`), 400)).toContain("period");
  });

  test("samples recorded at known times land in the right buckets for 1h and 30d", async () => {
    const id = await idOf("embeddings");
    const at = [NOW, NOW - 5 * MIN, NOW - 59 * MIN, NOW - 61 * MIN, NOW - 3 * DAY, NOW - 29 * DAY];
    const res = await record(id, at.map((t, i) => ({ at: t, queries: 10 ** i })));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ recorded: 6 });

    const hour = await stats(id, "1h");
    const byTime = (points: Point[]) => new Map(points.map((p: Point) => [parseX(p.x), p.y]));
    const h = byTime(hour.query_throughput);
    const minute = (ms: number) => Math.floor(ms / MIN) * MIN;
    expect(h.get(minute(NOW))).toBe(1);
    expect(h.get(minute(NOW - 5 * MIN))).toBe(10);
    expect(h.get(minute(NOW - 59 * MIN))).toBe(100);
    expect(hour.query_throughput.reduce((a: number, p: Point) => a + p.y, 0)).toBe(111);

    const month = await stats(id, "30d");
    const m = byTime(month.query_throughput);
    const threeHours = (ms: number) => Math.floor(ms / (180 * MIN)) * 180 * MIN;
    expect(m.get(threeHours(NOW))).toBe(1 + 10 + 100 + 1000); // 09:00–12:00 holds the last four
    expect(m.get(threeHours(NOW - 3 * DAY))).toBe(10_000);
    expect(m.get(threeHours(NOW - 29 * DAY))).toBe(100_000);
    expect(month.query_throughput.reduce((a: number, p: Point) => a + p.y, 0)).toBe(111_111);

    expect(month.daily_query_count).toBe(1111);
    expect(month.monthly_query_count).toBe(11_111); // 29 days ago is last month
    expect(month.daily_query_requests.map((p: Point) => p.y)).toEqual([0, 10_000, 0, 0, 1111]);
  });

  test("mean and 99th percentile latency for a known sample set", async () => {
    const id = await idOf("embeddings");
    const twoMinAgo = NOW - 2 * MIN;
    const slow = Array.from({ length: 200 }, (_, i) => i + 1); // mean 100.5, p99 (nearest rank) 198
    await record(id, [
      { at: twoMinAgo, queryLatencyMs: slow },
      { at: NOW, queryLatencyMs: [4, 8], updateLatencyMs: 12, embedLatencyMs: [1, 2, 3], rerankLatencyMs: 50 },
    ]);
    const st = await stats(id, "1h");
    const last = (field: string) => st[field]!.at(-1)!.y;
    const at = (field: string, ms: number) => st[field]!.find((p: Point) => parseX(p.x) === Math.floor(ms / MIN) * MIN)!.y;
    expect(last("query_latency_mean")).toBe(6);
    expect(last("query_latency_99")).toBe(8);
    expect(last("update_latency_mean")).toBe(12);
    expect(last("update_latency_99")).toBe(12);
    expect(last("embeds_latency_mean")).toBe(2);
    expect(last("embeds_latency_99")).toBe(3);
    expect(last("rerank_latency_mean")).toBe(50);
    expect(at("query_latency_mean", twoMinAgo)).toBe(100.5);
    expect(Math.abs(at("query_latency_99", twoMinAgo) - 198) / 198).toBeLessThan(0.045);
    expect(at("query_latency_mean", NOW - 3 * MIN)).toBe(0);
  });

  test("counters, levels and cost", async () => {
    const id = await idOf("embeddings");
    await record(id, [
      { at: NOW - 20 * MIN, updates: 30, reranks: 2, bandwidth: 1000, vectorCount: 100, dataSize: 4000, pendingIndexCount: 3 },
      { at: NOW - 10 * MIN, updates: 20, reranks: 1, bandwidth: 500, vectorCount: 150, dataSize: 6000, pendingIndexCount: 0 },
    ]);
    const st = await stats(id, "1h");
    expect(st).toMatchObject({
      pending_index_count: 0,
      current_vector_count: 150,
      daily_update_count: 50,
      monthly_update_count: 50,
      monthly_bandwidth_usage: 1500,
      storage_usage: 6000,
      daily_rerank_count: 3,
      monthly_rerank_count: 3,
    });
    expect(st.monthly_cost).toBeCloseTo(((11_111 + 50) / 100_000) * 0.4, 9);
    const vc = st.vector_count.map((p: Point) => p.y);
    expect(vc[59 - 21]).toBe(0);
    expect(vc[59 - 20]).toBe(100);
    expect(vc[59 - 11]).toBe(100);
    expect(vc[59 - 10]).toBe(150);
    expect(vc[59]).toBe(150);
    expect(st.daily_bandwidths.at(-1)!.y).toBe(1500);
    expect(st.daily_rerank_requests.at(-1)!.y).toBe(3);
  });

  test("free indexes cost nothing", async () => {
    const id = await idOf("quiet");
    await record(id, [{ queries: 100_000 }]);
    expect((await stats(id)).monthly_cost).toBe(0);
  });

  test("vectorUsage fixtures from the config file are recorded", async () => {
    const st = await stats(await idOf("seeded"), "1h");
    expect(st.daily_query_count).toBe(4);
    expect(st.current_vector_count).toBe(900);
    expect(st.storage_usage).toBe(12_345);
    expect(st.daily_update_requests.map((p: Point) => p.y)).toEqual([0, 0, 0, 6, 0]);
  });
});

describe("POST /__svc/usage/vector/{id}", () => {
  test("needs the account's messaging token", async () => {
    const id = await idOf("embeddings");
    await expectJsonError(await record(id, [{ queries: 1 }], "nope"), 401);
    await expectJsonError(await s.api(`/__svc/usage/vector/${id}`, { ...jsonInit("POST", { samples: [{}] }), token: null }), 401);
    const basic = await s.mgmt(`/__svc/usage/vector/${id}`, jsonInit("POST", { samples: [{ queries: 1 }] }));
    await expectJsonError(basic, 401);
  });

  test("bad samples → 400 naming the field; nothing is recorded", async () => {
    const id = await idOf("quiet");
    const before = (await stats(id)).daily_query_count;
    const cases: Array<[unknown, string]> = [
      [{ samples: [] }, "samples"],
      [{ samples: [{ queries: 1 }, { queries: -1 }] }, "samples[1].queries"],
      [{ samples: [{ querys: 1 }] }, "samples[0].querys"],
      [{ samples: [{ queryLatencyMs: ["fast"] }] }, "samples[0].queryLatencyMs"],
      [{ samples: [{ at: NOW + 3_600_000, queries: 1 }] }, "samples[0].at"],
      [[{ queries: 1 }], "JSON object"],
    ];
    for (const [body, field] of cases) {
      const res = await s.api(`/__svc/usage/vector/${id}`, jsonInit("POST", body));
      expect(await expectJsonError(res, 400)).toContain(field);
    }
    expect((await stats(id)).daily_query_count).toBe(before);
  });
});

describe("vectorUsage fixtures", () => {
  test("are recorded once, not again at every restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svcd-mgmt-"));
    const dbPath = join(dir, "svcd.sqlite");
    const clock = new ManualClock(NOW);
    try {
      for (let run = 0; run < 2; run++) {
        const server = await startTestServer({ configFile, clock, config: { dbPath } });
        const list = (await (await server.mgmt("/v2/vector/index")).json()) as Index[];
        const id = list.find((i) => i.name === "seeded")!.id;
        const st = (await (await server.mgmt(`/v2/vector/index/${id}/stats`)).json()) as Stats;
        await server.stop();
        expect(st.daily_query_count).toBe(4);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an entry naming an unknown index stops the start", async () => {
    const bad: ConfigFile = { accounts: [{ ...ALICE, vectorUsage: [{ index: "nope", queries: 1 }] }] };
    await expect(startTestServer({ configFile: bad })).rejects.toThrow("accounts[0].vectorUsage[0].index");
  });
});
