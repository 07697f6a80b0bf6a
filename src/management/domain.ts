import type { RoutePlugin } from "../http/plugin.ts";
import type { AppContext } from "../context/app-context.ts";
import type { MetricsEngine } from "../metrics/engine.ts";
import { applyFixtures } from "./fixtures.ts";
import { SearchIndexes } from "./search/logic.ts";
import { searchRoutes } from "./search/routes.ts";
import type { SearchStore } from "./search/storage.ts";
import type { ManagementDeps } from "./shared/deps.ts";
import { usageRoutes } from "./shared/usage-routes.ts";
import { messagingStatsControlRoutes, messagingStatsRoutes } from "./stats/routes.ts";
import { VectorIndexes } from "./vector/logic.ts";
import { vectorRoutes } from "./vector/routes.ts";
import type { UsageFixtureLedgerStorage, VectorStore } from "./vector/storage.ts";


export interface ManagementDomainDeps {
  /** The usage-metrics engine every statistic reads (the messaging engine counts into it too). */
  engine: MetricsEngine;
  /** Live DLQ size of an account; read on every statistics request. */
  dlqCount(accountId: string): Promise<number>;
  /** The indexes' stores and the ledger of usage fixtures already applied (from the storage engine). */
  stores: { search: SearchStore; vector: VectorStore; ledger: UsageFixtureLedgerStorage };
}

export interface ManagementDomain {
  managementRoutes: RoutePlugin[];
  controlRoutes: RoutePlugin[];
}

/**
 * Search and vector indexes and both statistics endpoints; the config file's index and usage
 * fixtures are stored first. Rejects with a ConfigError when one of them is invalid.
 */
export async function createManagementDomain(ctx: AppContext, deps: ManagementDomainDeps): Promise<ManagementDomain> {
  const { engine } = deps;
  const shared: ManagementDeps = { clock: ctx.clock, commit: ctx.commit, dialect: ctx.dialect };
  const { search: searchStore, vector: vectorStore, ledger } = deps.stores;
  const search = new SearchIndexes(searchStore, engine, shared);
  const vector = new VectorIndexes(vectorStore, engine, shared);

  const targets = {
    search: searchStore,
    vector: vectorStore,
    engine,
    ledger,
    nowMs: ctx.clock.now(),
    source: ctx.config.configFile ?? "config",
  };
  // Nothing to store, no write: a start on a locked database (or a full disk) still answers reads.
  const all = ctx.accounts.all();
  if (all.some((a) => [a.source.searchIndexes, a.source.vectorIndexes, a.source.vectorUsage].some((f) => f?.length)))
    await ctx.commit.run((tx) => applyFixtures(tx, all, targets));
  const { accounts, dialect, clock } = ctx;
  const stats = { accounts, dialect, clock, engine, dlqCount: (id: string) => deps.dlqCount(id) };
  return {
    managementRoutes: [
      searchRoutes(accounts, search),
      vectorRoutes(accounts, vector, engine, clock),
      messagingStatsRoutes(stats),
    ],
    controlRoutes: [
      usageRoutes({ accounts, dialect, clock, engine, vector, search }),
      messagingStatsControlRoutes(stats),
    ],
  };
}
