import { Elysia, t } from "elysia";
import type { AccountRegistry } from "../../accounts/accounts.ts";
import type { Clock } from "../../core/clock.ts";
import { managementAuth } from "../../http/auth.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import { parsePeriod } from "../../metrics/time.ts";
import { indexRoutes } from "../shared/index-routes.ts";
import { CreateVectorIndex, type VectorIndexes } from "./logic.ts";
import { vectorIndexStats } from "./stats.ts";
import { apiDoc, jsonContent } from "../../openapi/doc.ts";
import { PeriodQuery, VectorIndexJson, VectorStatsJson } from "../shared/api-schemas.ts";

/** `/v2/vector/index[/{id}[/rename|/reset-password|/stats]]`. */
export function vectorRoutes(accounts: AccountRegistry, indexes: VectorIndexes, engine: MetricsEngine, clock: Clock) {
  return new Elysia()
    .use(managementAuth(accounts))
    .get(
      "/v2/vector/index/:id/stats",
      async ({ account, params, query }) => {
        const index = await indexes.row(account, params.id);
        return vectorIndexStats(engine, index.id, index.type, parsePeriod(query.period), clock.now());
      },
      {
        params: t.Object({ id: t.String() }),
        query: PeriodQuery,
        detail: apiDoc({ summary: "Usage statistics of a vector index", responses: { 200: jsonContent(VectorStatsJson, "the index's usage") } }),
      },
    )
    .use(indexRoutes("/v2/vector/index", accounts, indexes, CreateVectorIndex, VectorIndexJson));
}
