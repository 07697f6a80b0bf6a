import type { Account } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import { newMessageId } from "../core/ids.ts";
import type { Wake } from "../core/wake.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import type { MessageRecord } from "../model/message.ts";
import { childOf } from "../model/trace.ts";
import { ConfigSource } from "../messages/config-source.ts";
import { parsePublishOptions } from "../messages/options.ts";
import type { DlqStorage } from "./storage.ts";

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
    return this.ctx.commit.run(() => this.store.delete(accountId, dlqId));
  }

  /** Returns the new message id, or undefined when the entry does not exist. */
  async retry(account: Account, dlqIds: string[], headers: Headers): Promise<Array<string | undefined>> {
    const now = this.ctx.clock.now();
    const src = new ConfigSource(this.ctx.dialect, headers, new URLSearchParams());
    const overrides = parsePublishOptions(src, account.limits, now);
    const given = (suffix: string) => src.get(suffix) !== undefined;
    const ids = await this.ctx.commit.run(() =>
      dlqIds.map((dlqId) => {
        const entry = this.store.get(account.id, dlqId);
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
        this.store.delete(account.id, dlqId);
        this.lifecycle.accept(fresh, now);
        return fresh.id;
      }),
    );
    this.wake();
    return ids;
  }
}

function mergeHeaders(base: Array<[string, string]>, override: Array<[string, string]>): Array<[string, string]> {
  const out = new Map(base.map(([k, v]) => [k.toLowerCase(), [k, v] as [string, string]]));
  // The retry request's own Content-Type describes that request, not the stored message.
  for (const [k, v] of override) if (k.toLowerCase() !== "content-type") out.set(k.toLowerCase(), [k, v]);
  return [...out.values()];
}
