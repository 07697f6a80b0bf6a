import type { Static } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Account, AccountRegistry } from "../../accounts/accounts.ts";
import type { Clock } from "../../core/clock.ts";
import type { Dialect } from "../../core/dialect.ts";
import { badRequest } from "../../core/errors.ts";
import { messagingAuth } from "../../http/auth.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import { recordSample, UsageBody } from "./usage.ts";
import { apiDoc, jsonContent } from "../../openapi/doc.ts";
import { RecordedJson } from "./api-schemas.ts";

/** Samples may be stamped at most this far ahead (clock skew of the reporting client). */
const MAX_FUTURE_MS = 60_000;

/** Finds the caller's index or throws 404. */
export interface IndexLookup {
  row(account: Account, id: string): Promise<{ id: string }>;
}

export interface UsageRouteDeps {
  accounts: AccountRegistry;
  dialect: Dialect;
  clock: Clock;
  engine: MetricsEngine;
  vector: IndexLookup;
  search: IndexLookup;
}

/**
 * svcd has no vector data plane, so index usage is reported here: `POST /__svc/usage/vector/{id}`
 * (and `/__svc/usage/search/{id}`) with `{"samples": [...]}`, authenticated with the account's
 * messaging token. Answers `{"recorded": n}`.
 */
export function usageRoutes(deps: UsageRouteDeps) {
  const record =
    (indexes: IndexLookup) =>
    async ({ account, params, body }: { account: Account; params: { id: string }; body: Static<typeof UsageBody> }) => {
      const index = await indexes.row(account, params.id);
      const { samples } = body;
      const now = deps.clock.now();
      samples.forEach((s, i) => {
        if (s.at !== undefined && s.at > now + MAX_FUTURE_MS) throw badRequest(`samples[${i}].at: is in the future`);
      });
      for (const sample of samples) recordSample(deps.engine, index.id, sample, sample.at ?? now);
      return { recorded: samples.length };
    };
  const hooks = (what: string) => ({
    params: t.Object({ id: t.String() }),
    body: UsageBody,
    detail: apiDoc({
      summary: `Report usage of a ${what} index (svcd has no data plane of its own)`,
      responses: { 200: jsonContent(RecordedJson, "how many samples were recorded") },
    }),
  });
  return new Elysia()
    .use(messagingAuth(deps.accounts, deps.dialect))
    .post("/__svc/usage/vector/:id", record(deps.vector), hooks("vector"))
    .post("/__svc/usage/search/:id", record(deps.search), hooks("search"));
}
