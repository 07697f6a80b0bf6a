import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import { ConfigSource } from "../messages/config-source.ts";
import { parsePublishOptions } from "../messages/options.ts";
import { PUBLISH_SETTINGS } from "../messages/publish-headers.ts";
import type { CallbackSpec } from "../model/message.ts";
import type { RunConfig, RunRecord } from "./model.ts";

/** What a resume or restart may set for the new run instead of the failed run's settings. */
export interface Overrides {
  retries?: number;
  retryDelayExpr?: string;
  flow?: RunConfig["flow"];
  labels?: string[];
  failureCallback?: CallbackSpec;
  /** When the new run's first message is due (`Delay` or `Not-Before`), Unix ms. */
  dueAt?: number;
  runId?: string;
}

/** The headers a resume or restart reads (as the hosted API documents them): they override the failed run's. */
const SUFFIXES = [
  "Retries",
  "Delay",
  "Not-Before",
  "Retry-Delay",
  "Flow-Control-Key",
  "Flow-Control-Value",
  "Label",
  "Failure-Callback",
  "Failure-Callback-Retries",
  "Failure-Callback-Retry-Delay",
  "Failure-Callback-Forward-{Name}",
];
export const OVERRIDE_SETTINGS = PUBLISH_SETTINGS.filter((s) => SUFFIXES.includes(s.suffix));

/** The overrides of a request's headers (its query is not read); a bad value is 400, as on a publish. */
export function readOverrides(dialect: Dialect, runIdHeader: string, account: Account, headers: Headers, nowMs: number): Overrides {
  const src = new ConfigSource(dialect, headers, new URLSearchParams());
  const given = parsePublishOptions(src, account.limits, nowMs);
  const delayed = given.notBefore ?? (given.delayMs > 0 ? nowMs + given.delayMs : undefined);
  return {
    retries: src.get("Retries") !== undefined ? given.retries : undefined,
    retryDelayExpr: given.retryDelayExpr,
    flow: given.flow,
    labels: given.labels,
    failureCallback: given.failureCallback,
    dueAt: delayed,
    runId: headers.get(runIdHeader) ?? undefined,
  };
}

/** The new run's settings: the failed run's, with what the request overrides. */
export function overriddenConfig(old: RunRecord, o: Overrides): { config: RunConfig; labels?: string[] } {
  const c = old.config;
  return {
    config: {
      ...c,
      retries: o.retries ?? c.retries,
      retryDelayExpr: o.retryDelayExpr ?? c.retryDelayExpr,
      flow: o.flow ?? c.flow,
      failureCallback: o.failureCallback ?? c.failureCallback,
    },
    labels: o.labels ?? old.labels,
  };
}
