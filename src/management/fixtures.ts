import { Type, type Static, type TSchema } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import { ConfigError } from "../config/config.ts";
import { DurationError, parseDuration } from "../util/duration.ts";
import type { MetricsEngine } from "../metrics/engine.ts";
import {
  derivedIndexId, IndexId, IndexName, IndexType, LimitOverrides, Region,
} from "./shared/indexes.ts";
import { recordSample, sampleFields, type UsageSample } from "./shared/usage.ts";
import { firstProblem } from "../core/validation.ts";
import { newSearchRow } from "./search/logic.ts";
import type { SearchStore } from "./search/storage.ts";
import { DimensionCount, newVectorRow, SimilarityFunction } from "./vector/logic.ts";
import type { UsageFixtureLedgerStorage, VectorStore } from "./vector/storage.ts";
import type { WriteTx } from "../store/transactor.ts";

const common = {
  id: Type.Optional(IndexId),
  name: IndexName,
  region: Region,
  type: Type.Optional(IndexType),
  token: Type.Optional(Type.String({ minLength: 1 })),
  readOnlyToken: Type.Optional(Type.String({ minLength: 1 })),
  creationTime: Type.Optional(Type.Integer({ minimum: 0, description: "Unix seconds" })),
  limits: Type.Optional(LimitOverrides),
};
export const SearchIndexFixture = Type.Object(
  { ...common, partnerEmail: Type.Optional(Type.String()), inputEnrichmentEnabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const VectorIndexFixture = Type.Object(
  { ...common, similarityFunction: SimilarityFunction, dimensionCount: DimensionCount },
  { additionalProperties: false },
);
const { at: _at, ...sampleWithoutAt } = sampleFields;
export const VectorUsageFixture = Type.Object(
  {
    index: Type.String({ minLength: 1, description: "id or name of a vector or search index of the account" }),
    at: Type.Optional(Type.Integer({ minimum: 0, description: "Unix ms" })),
    ago: Type.Optional(Type.String({ description: "duration before the first start that records it, e.g. 2h30m" })),
    ...sampleWithoutAt,
  },
  { additionalProperties: false },
);

export interface FixtureTargets {
  search: SearchStore;
  vector: VectorStore;
  engine: MetricsEngine;
  ledger: UsageFixtureLedgerStorage;
  nowMs: number;
  /** Config file name, for messages. */
  source: string;
}

interface Located<T> {
  value: T;
  path: string;
}

/**
 * Applies `searchIndexes`, `vectorIndexes` and `vectorUsage` of every account: indexes are upserted
 * by id (explicit, or derived from account and name) so ids, tokens and usage survive restarts;
 * each usage entry is recorded once. Everything is validated first; a bad fixture is a ConfigError.
 * Runs inside the start's write (`tx`).
 */
export async function applyFixtures(tx: WriteTx, accounts: Account[], t: FixtureTargets): Promise<void> {
  const fail = (path: string, message: string): never => {
    throw new ConfigError("--config", `${t.source}: ${path}: ${message}`);
  };
  const check = <S extends TSchema>(schema: S, list: unknown[] | undefined, base: string): Located<Static<S>>[] =>
    (list ?? []).map((value, i) => {
      const path = `${base}[${i}]`;
      const problem = firstProblem(schema, value, path);
      if (problem) throw new ConfigError("--config", `${t.source}: ${problem}`);
      return { value: value as Static<S>, path };
    });

  const plans = accounts.map((account, i) => {
    const base = `accounts[${i}]`;
    const search = check(SearchIndexFixture, account.source.searchIndexes, `${base}.searchIndexes`);
    const vector = check(VectorIndexFixture, account.source.vectorIndexes, `${base}.vectorIndexes`);
    const usage = check(VectorUsageFixture, account.source.vectorUsage, `${base}.vectorUsage`);
    return { account, search, vector, usage };
  });

  const seenIds = new Map<string, string>();
  const resolved = [];
  for (const { account, search, vector, usage } of plans) {
    const ids = async (kind: "search" | "vector", list: Located<{ id?: string; name: string }>[]) => {
      const names = new Map<string, string>();
      const found: string[] = [];
      for (const { value, path } of list) {
        const id = value.id ?? derivedIndexId(kind, account.id, value.name);
        if (names.has(value.name)) fail(`${path}.name`, `repeats the name of ${names.get(value.name)}`);
        if (seenIds.has(id)) fail(`${path}.id`, `repeats the index id of ${seenIds.get(id)}`);
        const store = kind === "search" ? t.search : t.vector;
        const holder = await store.idByName(tx, account.id, value.name);
        if (holder && holder !== id)
          fail(`${path}.name`, `an index named "${value.name}" was created through the API (id ${holder}); give the fixture that id or another name`);
        seenIds.set(id, path);
        names.set(value.name, path);
        found.push(id);
      }
      return found;
    };
    const searchIds = await ids("search", search);
    resolved.push({ account, search, vector, usage, searchIds, vectorIds: await ids("vector", vector) });
  }

  for (const r of resolved) {
    for (const [i, { value: f }] of r.search.entries()) await upsertSearch(tx, r.account, r.searchIds[i]!, f, t);
    for (const [i, { value: f }] of r.vector.entries()) await upsertVector(tx, r.account, r.vectorIds[i]!, f, t);
  }
  for (const r of resolved) await recordUsage(tx, r.account, r.usage, t, fail);
}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

type SearchFixture = Static<typeof SearchIndexFixture>;
type VectorFixture = Static<typeof VectorIndexFixture>;

function overrides(f: SearchFixture): Record<string, number> {
  return Object.fromEntries(Object.entries(f.limits ?? {}).map(([k, v]) => [snake(k), v as number]));
}

async function upsertSearch(tx: WriteTx, account: Account, id: string, f: SearchFixture, t: FixtureTargets) {
  const before = await t.search.byId(tx, id);
  const fresh = newSearchRow(account, { id, name: f.name, region: f.region, type: f.type ?? account.plan }, t.nowMs);
  await t.search.upsert(tx, {
    ...fresh,
    ...overrides(f),
    max_monthly_reranks: f.limits?.maxMonthlyReranks ?? fresh.max_monthly_reranks,
    endpoint: before?.endpoint ?? fresh.endpoint,
    partner_email: f.partnerEmail ?? "",
    token: f.token ?? before?.token ?? fresh.token,
    read_only_token: f.readOnlyToken ?? before?.read_only_token ?? fresh.read_only_token,
    creation_time: f.creationTime ?? before?.creation_time ?? fresh.creation_time,
    input_enrichment_enabled: f.inputEnrichmentEnabled ? 1 : 0,
  });
}

async function upsertVector(tx: WriteTx, account: Account, id: string, f: VectorFixture, t: FixtureTargets) {
  const before = await t.vector.byId(tx, id);
  const fresh = newVectorRow(
    account,
    {
      id, name: f.name, region: f.region, type: f.type ?? account.plan,
      similarityFunction: f.similarityFunction, dimensionCount: f.dimensionCount,
    },
    t.nowMs,
  );
  const { max_monthly_reranks: _unused, ...limits } = overrides(f);
  await t.vector.upsert(tx, {
    ...fresh,
    ...limits,
    endpoint: before?.endpoint ?? fresh.endpoint,
    token: f.token ?? before?.token ?? fresh.token,
    read_only_token: f.readOnlyToken ?? before?.read_only_token ?? fresh.read_only_token,
    creation_time: f.creationTime ?? before?.creation_time ?? fresh.creation_time,
  });
}

async function recordUsage(
  tx: WriteTx,
  account: Account,
  entries: Located<Static<typeof VectorUsageFixture>>[],
  t: FixtureTargets,
  fail: (path: string, message: string) => never,
) {
  const lookup = async (ref: string) => {
    for (const store of [t.vector, t.search]) {
      if (await store.get(tx, account.id, ref)) return ref;
      const byName = await store.idByName(tx, account.id, ref);
      if (byName) return byName;
    }
    return null;
  };
  const occurrences = new Map<string, number>();
  const applied: string[] = [];
  for (const { value, path } of entries) {
    const { index, ago, at, ...sample } = value;
    const indexId =
      (await lookup(index)) ?? fail(`${path}.index`, `no vector or search index "${index}" in this account`);
    if (ago !== undefined && at !== undefined) fail(path, "give either at or ago, not both");
    let atMs = at ?? t.nowMs;
    if (ago !== undefined) {
      try {
        atMs = t.nowMs - parseDuration(ago);
      } catch (error) {
        if (error instanceof DurationError) fail(`${path}.ago`, error.message);
        throw error;
      }
    }
    // Identical entries count separately; the n-th copy has its own key.
    const text = JSON.stringify(value);
    const n = (occurrences.get(text) ?? 0) + 1;
    occurrences.set(text, n);
    const key = new Bun.CryptoHasher("sha256").update(`${account.id}\0${text}\0${n}`).digest("hex");
    if (await t.ledger.seen(tx, key)) continue;
    recordSample(t.engine, indexId, sample as UsageSample, atMs);
    applied.push(key);
  }
  await t.engine.flush();
  for (const key of applied) await t.ledger.mark(tx, key, t.nowMs);
}
