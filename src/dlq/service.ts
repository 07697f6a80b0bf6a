import type { Account } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import { newMessageId } from "../core/ids.ts";
import type { Wake } from "../core/wake.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import type { MessageRecord } from "../model/message.ts";
import { childOf } from "../model/trace.ts";
import { ConfigSource } from "../messages/config-source.ts";
import { parsePublishOptions, type PublishOptions } from "../messages/options.ts";
import type { DlqStorage } from "./storage.ts";
import type { WriteTx } from "../store/transactor.ts";

/**
 * Re-publishing a dead letter: a new message with the stored content; configuration headers
 * given on the retry request override the stored settings.
 */
export class DlqService {
  constructor(
    private readonly ctx: AppContext,
    private readonly store: DlqStorage,
    private readonly lifecycle: MessageLifecycle,
    private readonly wake: Wake,
  ) {}

  /** False when the entry does not exist. */
  delete(accountId: string, dlqId: string): Promise<boolean> {
    return this.ctx.commit.run((tx) => this.store.delete(tx, accountId, dlqId));
  }

  /** Returns the new message id, or undefined when the entry does not exist. */
  async retry(account: Account, dlqIds: string[], headers: Headers): Promise<Array<string | undefined>> {
    const now = this.ctx.clock.now();
    const src = new ConfigSource(this.ctx.dialect, headers, new URLSearchParams());
    const overrides = parsePublishOptions(src, account.limits, now);
    const given = (suffix: string) => src.get(suffix) !== undefined;
    const request: RetryRequest = { account, headers, now, overrides, given };
    const ids = await this.ctx.commit.run(async (tx) => {
      const ids: Array<string | undefined> = [];
      for (const dlqId of dlqIds) ids.push(await this.retryOne(tx, dlqId, request));
      return ids;
    });
    this.wake();
    return ids;
  }

  /** Re-publishes one entry inside the write `tx`; undefined when it does not exist. */
  private async retryOne(tx: WriteTx, dlqId: string, r: RetryRequest): Promise<string | undefined> {
    const { account, headers, now, overrides, given } = r;
    const entry = await this.store.get(tx, account.id, dlqId);
    if (!entry) return undefined;
    const old = entry.message;
    const notBefore = overrides.notBefore ?? now + overrides.delayMs;
    const fresh: MessageRecord = {
      ...old,
      id: newMessageId(),
      state: "CREATED",
      dispatchAt: notBefore,
      notBefore,
      createdAt: now,
      retried: 0,
      maxRetries: given("Retries") ? overrides.retries : old.maxRetries,
      method: given("Method") ? overrides.method : old.method,
      timeoutMs: given("Timeout") ? overrides.timeoutMs! : old.timeoutMs,
      retryDelayExpr: given("Retry-Delay") ? overrides.retryDelayExpr : old.retryDelayExpr,
      callback: given("Callback") ? overrides.callback : old.callback,
      failureCallback: given("Failure-Callback") ? overrides.failureCallback : old.failureCallback,
      labels: given("Label") ? overrides.labels : old.labels,
      redact: given("Redact-Fields") ? overrides.redact : old.redact,
      headers: mergeHeaders(old.headers, overrides.headers),
      // A retry from the DLQ goes on in the message's own trace.
      trace: this.ctx.tracing && (old.trace ? childOf(old.trace) : this.ctx.tracing.newMessage(headers)),
    };
    await this.store.delete(tx, account.id, dlqId);
    await this.lifecycle.accept(tx, fresh, now);
    return fresh.id;
  }
}

/** What a retry request asks of every entry it re-publishes. */
interface RetryRequest {
  account: Account;
  headers: Headers;
  now: number;
  /** The settings the request's headers give. */
  overrides: PublishOptions;
  /** Whether the request gave this setting (a header suffix), overriding the stored one. */
  given: (suffix: string) => boolean;
}

function mergeHeaders(base: Array<[string, string]>, override: Array<[string, string]>): Array<[string, string]> {
  const out = new Map(base.map(([k, v]) => [k.toLowerCase(), [k, v] as [string, string]]));
  // The retry request's own Content-Type describes that request, not the stored message.
  for (const [k, v] of override) if (k.toLowerCase() !== "content-type") out.set(k.toLowerCase(), [k, v]);
  return [...out.values()];
}
