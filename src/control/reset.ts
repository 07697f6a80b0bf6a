import type { GroupCommit } from "../store/group-commit.ts";

/**
 * Deletes everything one domain keeps for an account (never its credentials). It runs inside the
 * reset's single write transaction, so it must be synchronous; it may also drop in-memory state
 * (timers, counters, in-flight attempts) of that account.
 */
export type AccountReset = (accountId: string) => void;

/**
 * `POST /__svc/reset`: every domain registers how to forget one account, so the control plane
 * never needs to know which tables exist. All parts run in one transaction, in registration
 * order: a reset either happens completely or not at all.
 */
export class ResetRegistry {
  private readonly parts: Array<{ name: string; reset: AccountReset }> = [];

  constructor(private readonly commit: GroupCommit) {}

  register(name: string, reset: AccountReset): void {
    if (this.parts.some((p) => p.name === name)) throw new Error(`reset part "${name}" is registered twice`);
    this.parts.push({ name, reset });
  }

  names(): string[] {
    return this.parts.map((p) => p.name);
  }

  /** Runs every part for `accountId` in one group-commit transaction; returns the part names. */
  async resetAccount(accountId: string): Promise<string[]> {
    return this.commit.run(() => {
      for (const part of this.parts) part.reset(accountId);
      return this.names();
    });
  }
}

/** The messaging engine's parts: live messages (their in-flight attempts disowned), logs, DLQ. */
export interface MessagingResetSources {
  stores: {
    messages: { deleteAccount(accountId: string): string[] };
    events: { deleteAccount(accountId: string): void };
    dlq: { deleteAccount(accountId: string): void };
  };
  dispatcher: { forget(messageId: string): void };
}

export function registerMessagingResets(registry: ResetRegistry, messaging: MessagingResetSources): void {
  registry.register("messages", (accountId) => {
    // A late answer of a deleted message's attempt must not resurrect it in the log or the DLQ.
    for (const id of messaging.stores.messages.deleteAccount(accountId)) messaging.dispatcher.forget(id);
  });
  registry.register("logs", (accountId) => messaging.stores.events.deleteAccount(accountId));
  registry.register("dlq", (accountId) => messaging.stores.dlq.deleteAccount(accountId));
}
