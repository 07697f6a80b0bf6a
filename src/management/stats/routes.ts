import { Elysia, t } from "elysia";
import type { AccountRegistry } from "../../accounts/accounts.ts";
import type { Clock } from "../../core/clock.ts";
import type { Dialect } from "../../core/dialect.ts";
import { notFound } from "../../core/errors.ts";
import { managementAuth, messagingAuth } from "../../http/auth.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import { parsePeriod } from "../../metrics/time.ts";
import { messagingStats } from "./logic.ts";
import { apiDoc, jsonContent } from "../../openapi/doc.ts";
import { MessagingStatsJson, PeriodQuery } from "../shared/api-schemas.ts";

export interface StatsRouteDeps {
  accounts: AccountRegistry;
  dialect: Dialect;
  clock: Clock;
  engine: MetricsEngine;
  dlqCount: (accountId: string) => number | Promise<number>;
}

/** `GET /v2/{svc|qstash}/stats/{id}`: `{id}` is the caller's own messaging user id, else 404. */
export function messagingStatsRoutes(deps: StatsRouteDeps) {
  return new Elysia().use(managementAuth(deps.accounts)).get(
    `/v2/${deps.dialect.statsPathSegment}/stats/:id`,
    async ({ account, params, query }) => {
      if (params.id !== account.id) throw notFound(`user ${params.id} not found`);
      const period = parsePeriod(query.period);
      return messagingStats(deps.engine, account, period, deps.clock.now(), await deps.dlqCount(account.id));
    },
    {
      params: t.Object({ id: t.String({ description: "the caller's own messaging user id" }) }),
      query: PeriodQuery,
      detail: apiDoc({ summary: "Messaging usage statistics of the account", responses: { 200: jsonContent(MessagingStatsJson, "the account's usage") } }),
    },
  );
}

/**
 * `GET /__svc/stats?period=`: the same statistics for the account of a messaging token, so tools
 * that hold only the token (the web console) need no management API key.
 */
export function messagingStatsControlRoutes(deps: StatsRouteDeps) {
  return new Elysia().use(messagingAuth(deps.accounts, deps.dialect)).get(
    "/__svc/stats",
    async ({ account, query }) =>
      messagingStats(deps.engine, account, parsePeriod(query.period), deps.clock.now(), await deps.dlqCount(account.id)),
    {
      query: PeriodQuery,
      detail: apiDoc({
        summary: "The caller's messaging usage statistics (as the management API's), by messaging token",
        responses: { 200: jsonContent(MessagingStatsJson, "the account's usage") },
      }),
    },
  );
}
