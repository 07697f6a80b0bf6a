import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_PLANS } from "../../src/config/plans.ts";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { expectJsonError, expectPeriodSeries, jsonInit, SEARCH_INDEX_FIELDS } from "../helpers/management.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const NOW = Date.UTC(2026, 10, 22, 10, 17, 30, 250);
const PRODUCTS_ID = "0639864f-ece6-429c-8118-86a287b0e808";
const ALICE = {
  email: "alice@example.com", apiKey: "alice-key", userId: "alice", token: "alice-token", plan: "payg" as const,
  searchIndexes: [
    { name: "docs", region: "eu-west-1" },
    {
      id: PRODUCTS_ID, name: "products", region: "us-central1", type: "free", partnerEmail: "team@partner.example",
      token: "fixed-token", readOnlyToken: "fixed-ro-token", creationTime: 1707313165, inputEnrichmentEnabled: true,
      limits: { maxVectorCount: 5, maxDailyQueries: 77 },
    },
  ],
};
const BOB = {
  email: "bob@example.com", apiKey: "bob-key", userId: "bob", token: "bob-token",
  searchIndexes: [{ name: "bobs-index", region: "eu-west-1" }],
};
const configFile: ConfigFile = { accounts: [ALICE, BOB] };

type Index = Record<string, unknown> & { id: string; name: string; token: string; read_only_token: string };

let s: TestServer;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(NOW);
  s = await startTestServer({ configFile, clock });
});
afterAll(() => s.stop());

const list = async (as: { email: string; apiKey: string } = ALICE) => (await (await s.mgmt("/v2/search", { email: as.email, apiKey: as.apiKey })).json()) as Index[];
const bobsIndexId = async () => (await list(BOB))[0]!.id;

describe("GET /v2/search", () => {
  test("answers only the caller's indexes from the config file", async () => {
    const res = await s.mgmt("/v2/search");
    expect(res.status).toBe(200);
    const indexes = (await res.json()) as Index[];
    expect(indexes.map((i) => i.name).sort()).toEqual(["docs", "products"]);
    expect((await list(BOB)).map((i) => i.name)).toEqual(["bobs-index"]);
  });

  test("every documented field, in its order, nothing else", async () => {
    for (const index of await list()) expect(Object.keys(index)).toEqual(SEARCH_INDEX_FIELDS);
  });

  test("defaults: plan limits, -1 for unlimited, empty partner_email, Unix seconds, generated tokens", async () => {
    const docs = (await list()).find((i) => i.name === "docs")!;
    const limits = DEFAULT_PLANS.payg.index;
    expect(docs).toMatchObject({
      customer_id: ALICE.email,
      type: "payg",
      region: "eu-west-1",
      partner_email: "",
      max_vector_count: limits.maxVectorCount,
      max_monthly_reranks: -1,
      max_daily_updates: -1,
      max_daily_queries: -1,
      max_monthly_bandwidth: -1,
      max_writes_per_second: limits.maxWritesPerSecond,
      max_query_per_second: limits.maxQueryPerSecond,
      max_reads_per_request: limits.maxReadsPerRequest,
      max_writes_per_request: limits.maxWritesPerRequest,
      creation_time: Math.floor(NOW / 1000),
      input_enrichment_enabled: false,
    });
    expect(docs.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(docs.endpoint).toBe(`https://docs-${docs.id.slice(0, 8)}.svcd.local`);
    expect(docs.token.length).toBeGreaterThan(20);
    expect(docs.read_only_token).not.toBe(docs.token);
  });

  test("fixture fields win over defaults", async () => {
    const products = (await list()).find((i) => i.name === "products")!;
    expect(products).toMatchObject({
      id: PRODUCTS_ID, type: "free", region: "us-central1", partner_email: "team@partner.example",
      token: "fixed-token", read_only_token: "fixed-ro-token", creation_time: 1707313165,
      input_enrichment_enabled: true, max_vector_count: 5, max_daily_queries: 77,
      max_daily_updates: DEFAULT_PLANS.free.index.maxDailyUpdates,
    });
  });

  test("throughput_vector: the last 60 minutes, one point a minute, from recorded usage", async () => {
    const docs = (await list()).find((i) => i.name === "docs")!;
    const usage = await s.api(`/__svc/usage/search/${docs.id}`, jsonInit("POST", { samples: [{ queries: 3, updates: 2 }, { queries: 1, at: NOW - 10 * 60_000 }] }));
    expect(await usage.json()).toEqual({ recorded: 2 });
    const got = (await (await s.mgmt(`/v2/search/${docs.id}`)).json()) as { throughput_vector: Array<{ x: string; y: number }> };
    expectPeriodSeries(got.throughput_vector, "1h", NOW);
    expect(got.throughput_vector[59]!.y).toBe(5);
    expect(got.throughput_vector[49]!.y).toBe(1);
    expect(got.throughput_vector.reduce((a, p) => a + p.y, 0)).toBe(6);
  });
});

describe("GET /v2/search/{id}", () => {
  test("one index, same object as in the list", async () => {
    const [first] = await list();
    const res = await s.mgmt(`/v2/search/${first!.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(first!);
  });

  test("unknown id and another account's index are both 404", async () => {
    expect(await expectJsonError(await s.mgmt("/v2/search/00000000-0000-0000-0000-000000000000"), 404)).toContain("not found");
    await expectJsonError(await s.mgmt(`/v2/search/${await bobsIndexId()}`), 404);
  });
});

describe("credentials", () => {
  test("missing, wrong or mixed-account Basic credentials → 401 with WWW-Authenticate", async () => {
    const id = (await list())[0]!.id;
    for (const path of ["/v2/search", `/v2/search/${id}`]) {
      for (const res of [
        await s.mgmt(path, { noAuth: true }),
        await s.mgmt(path, { apiKey: "wrong" }),
        await s.mgmt(path, { email: ALICE.email, apiKey: BOB.apiKey }),
        await s.mgmt(path, { headers: { authorization: `Bearer ${ALICE.token}` } }),
      ]) {
        expect(await expectJsonError(res, 401)).toBe("Unauthorized");
        expect(res.headers.get("www-authenticate")).toStartWith("Basic");
      }
    }
    const create = await s.mgmt("/v2/search", { ...jsonInit("POST", { name: "x", region: "eu-west-1", type: "payg" }), noAuth: true });
    await expectJsonError(create, 401);
  });
});

describe("create, rename, reset-password, delete", () => {
  test("full life cycle; actions answer the JSON string \"OK\"", async () => {
    const created = await s.mgmt("/v2/search", jsonInit("POST", { name: "fresh", region: "us-central1", type: "free" }));
    expect(created.status).toBe(200);
    const index = (await created.json()) as Index;
    expect(Object.keys(index)).toEqual(SEARCH_INDEX_FIELDS);
    expect(index).toMatchObject({ name: "fresh", type: "free", region: "us-central1", max_vector_count: DEFAULT_PLANS.free.index.maxVectorCount });
    expect((await list()).map((i) => i.id)).toContain(index.id);

    const renamed = await s.mgmt(`/v2/search/${index.id}/rename`, jsonInit("POST", { name: "renamed" }));
    expect(renamed.status).toBe(200);
    expect(renamed.headers.get("content-type")).toContain("application/json");
    expect(await renamed.text()).toBe('"OK"');
    const afterRename = (await (await s.mgmt(`/v2/search/${index.id}`)).json()) as Index;
    expect(afterRename.name).toBe("renamed");
    expect(afterRename.endpoint).toBe(index.endpoint as string);

    const reset = await s.mgmt(`/v2/search/${index.id}/reset-password`, { method: "POST" });
    expect(await reset.json()).toBe("OK");
    const afterReset = (await (await s.mgmt(`/v2/search/${index.id}`)).json()) as Index;
    expect(afterReset.token).not.toBe(index.token);
    expect(afterReset.read_only_token).not.toBe(index.read_only_token);

    const deleted = await s.mgmt(`/v2/search/${index.id}`, { method: "DELETE" });
    expect(await deleted.json()).toBe("OK");
    await expectJsonError(await s.mgmt(`/v2/search/${index.id}`), 404);
    await expectJsonError(await s.mgmt(`/v2/search/${index.id}`, { method: "DELETE" }), 404);
  });

  test("bad input → 400 naming the field", async () => {
    const cases: Array<[unknown, string]> = [
      [{ region: "eu-west-1", type: "payg" }, "name"],
      [{ name: "a", region: "eu-west-2", type: "payg" }, "region"],
      [{ name: "a", region: "eu-west-1", type: "gold" }, "type"],
      [{ name: "a b", region: "eu-west-1", type: "payg" }, "name"],
      [{ name: "a", region: "eu-west-1", type: "payg", extra: 1 }, "extra"],
      [{ name: "docs", region: "eu-west-1", type: "payg" }, "docs"],
    ];
    for (const [body, field] of cases) {
      expect(await expectJsonError(await s.mgmt("/v2/search", jsonInit("POST", body)), 400)).toContain(field);
    }
    await expectJsonError(await s.mgmt("/v2/search", { method: "POST", body: "{nope", headers: { "content-type": "application/json" } }), 400);
    const id = (await list())[0]!.id;
    expect(await expectJsonError(await s.mgmt(`/v2/search/${id}/rename`, jsonInit("POST", { name: "" })), 400)).toContain("name");
  });

  test("another account's index cannot be renamed, reset or deleted (404)", async () => {
    const id = await bobsIndexId();
    await expectJsonError(await s.mgmt(`/v2/search/${id}/rename`, jsonInit("POST", { name: "mine" })), 404);
    await expectJsonError(await s.mgmt(`/v2/search/${id}/reset-password`, { method: "POST" }), 404);
    await expectJsonError(await s.mgmt(`/v2/search/${id}`, { method: "DELETE" }), 404);
    expect((await list(BOB))[0]!.name).toBe("bobs-index");
  });
});

describe("config file", () => {
  test("indexes keep their ids, tokens and creation time across restarts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svcd-mgmt-"));
    const dbPath = join(dir, "svcd.sqlite");
    try {
      const first = await startTestServer({ configFile, config: { dbPath } });
      const before = (await (await first.mgmt("/v2/search")).json()) as Index[];
      await first.stop();
      const second = await startTestServer({ configFile, config: { dbPath } });
      const after = (await (await second.mgmt("/v2/search")).json()) as Index[];
      await second.stop();
      const strip = (list: Index[]) => list.map(({ throughput_vector: _, ...rest }) => rest);
      expect(strip(after)).toEqual(strip(before));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a bad fixture stops the start with a message naming it", async () => {
    const bad: ConfigFile = { accounts: [{ ...ALICE, searchIndexes: [ALICE.searchIndexes[0]!, { name: "x", region: "mars" }] }] };
    await expect(startTestServer({ configFile: bad })).rejects.toThrow(
      "accounts[0].searchIndexes[1].region: must be one of eu-west-1, us-central1",
    );
    const dup: ConfigFile = { accounts: [{ ...ALICE, searchIndexes: [{ name: "x", region: "eu-west-1" }, { name: "x", region: "eu-west-1" }] }] };
    await expect(startTestServer({ configFile: dup })).rejects.toThrow("accounts[0].searchIndexes[1].name: repeats");
    const typo: ConfigFile = { accounts: [{ ...ALICE, searchIndexes: [{ name: "x", region: "eu-west-1", regoin: "x" }] }] };
    await expect(startTestServer({ configFile: typo })).rejects.toThrow("accounts[0].searchIndexes[0].regoin: is not a known field");
  });

  test("upstash dialect names partner_email vercel_email, in the same place", async () => {
    const up = await startTestServer({ configFile, config: { dialect: "upstash" } });
    try {
      const [index] = (await (await up.mgmt("/v2/search")).json()) as Index[];
      expect(Object.keys(index!)).toEqual(SEARCH_INDEX_FIELDS.map((f) => (f === "partner_email" ? "vercel_email" : f)));
    } finally {
      await up.stop();
    }
  });
});
