import type { Elysia } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { MetricsEngine } from "../metrics/engine.ts";
import { RollupStore } from "../metrics/store.ts";
import { applyFixtures } from "./fixtures.ts";
import { SearchIndexes } from "./search/logic.ts";
import { searchRoutes } from "./search/routes.ts";
import { createSearchStore } from "./search/store.ts";
import type { ManagementDeps } from "./shared/deps.ts";
import { usageRoutes } from "./shared/usage-routes.ts";
import { messagingStatsRoutes } from "./stats/routes.ts";
import { VectorIndexes } from "./vector/logic.ts";
import { vectorRoutes } from "./vector/routes.ts";
import { createVectorStore, UsageFixtureLedger } from "./vector/store.ts";

type Plugin = Elysia<any, any, any, any, any, any, any>;

export interface ManagementDomainDeps {
  /** Live DLQ size of an account; read on every statistics request. */
  dlqCount(accountId: string): number;
}

export interface ManagementDomain {
  /** The usage-metrics engine; the messaging engine calls `metrics.count(accountId, MessagingMetric.x, n, atMs)`. */
  metrics: MetricsEngine;
  managementRoutes: Plugin[];
  controlRoutes: Plugin[];
  /** Flushes pending usage; call before the database closes. */
  stop(): void;
}

/**
 * Search and vector indexes, the usage-metrics engine and both statistics endpoints. Throws a
 * ConfigError when an index or usage fixture of the config file is invalid.
 */
export function createManagementDomain(ctx: AppContext, deps: ManagementDomainDeps): ManagementDomain {
  const engine = new MetricsEngine(new RollupStore(ctx.db), ctx.clock, { log: ctx.log });
  const shared: ManagementDeps = { clock: ctx.clock, commit: ctx.commit, dialect: ctx.dialect };
  const searchStore = createSearchStore(ctx.db);
  const vectorStore = createVectorStore(ctx.db);
  const search = new SearchIndexes(searchStore, engine, shared);
  const vector = new VectorIndexes(vectorStore, engine, shared);

  ctx.db.transaction(() =>
    applyFixtures(ctx.accounts.all(), {
      search: searchStore,
      vector: vectorStore,
      engine,
      ledger: new UsageFixtureLedger(ctx.db),
      nowMs: ctx.clock.now(),
      source: ctx.config.configFile ?? "config",
    }),
  )();
  engine.start();

  const { accounts, dialect, clock } = ctx;
  return {
    metrics: engine,
    managementRoutes: [
      searchRoutes(accounts, search),
      vectorRoutes(accounts, vector, engine, clock),
      messagingStatsRoutes({ accounts, dialect, clock, engine, dlqCount: (id) => deps.dlqCount(id) }),
    ],
    controlRoutes: [
      usageRoutes({ accounts, dialect, clock, engine, vector, search }),
    ],
    stop: () => engine.stop(),
  };
}
