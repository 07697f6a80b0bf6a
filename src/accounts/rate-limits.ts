import type { Clock } from "../core/clock.ts";
import { HttpError } from "../core/errors.ts";
import type { MessageListener } from "../model/events.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { RequestCountStorage } from "./storage.ts";

/** What the rate limits read of an account: its id and its plan's two limits (`Infinity`: none). */
interface Limited {
  id: string;
  limits: { burstPerSecond: number; maxMessagesPerDay: number };
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The hosted service's request limits, per account, on the injected clock, counted in the storage
 * so that every node sharing it counts the same requests:
 * - a burst limit per second on every messaging request but the operational ones (publish,
 *   enqueue, batch, trigger, notify, wait), answered 429 with `Burst-RateLimit-*`;
 * - a daily message limit (UTC days): a message that would pass it is refused, inside the write
 *   that stores it, so exactly the limit is stored whichever nodes take the requests; once the day
 *   is full, publish, enqueue, batch and trigger are answered 429 with `RateLimit-*` until the next day.
 */
export class RequestLimits {
  /** The day's count as this node last stored it: a request that cannot fit is refused before its write. */
  private readonly daySeen = new Map<string, { day: number; count: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly counts: RequestCountStorage,
  ) {}

  /** Throws (or rejects with) the 429 this request meets, else counts it against the burst limit. */
  admit(account: Limited, method: string, path: string): void | Promise<void> {
    if (PUBLISHING.test(path) && method === "POST") return this.admitPublish(account);
    if (OPERATIONAL.test(path) || !path.startsWith("/v2/")) return;
    const limit = account.limits.burstPerSecond;
    if (!Number.isFinite(limit)) return;
    const second = Math.floor(this.clock.now() / 1000);
    return this.counts.countRequest(account.id, second).then((n) => checkBurst(n, limit, second));
  }

  /** A publishing request: 429 when the day is full as this node last saw it (the write checks exactly). */
  admitPublish(account: Limited): void {
    const limit = account.limits.maxMessagesPerDay;
    if (!Number.isFinite(limit)) return;
    const day = Math.floor(this.clock.now() / DAY_MS);
    const seen = this.daySeen.get(account.id);
    if (seen?.day === day && seen.count >= limit) throw dayFull(limit, day);
  }

  /**
   * Counts each new message of an account against its daily limit, in the write that stores it
   * (callbacks, the system's own, do not count); the message that would pass the limit fails
   * its write with the 429.
   */
  listener(accounts: { byId(id: string): Limited | undefined }): MessageListener {
    return {
      // Only a message of a limited account costs a promise.
      created: ({ message, atMs }, tx) => {
        if (message.kind !== "message") return;
        const account = accounts.byId(message.accountId);
        const limit = account?.limits.maxMessagesPerDay ?? Infinity;
        if (!account || !Number.isFinite(limit)) return;
        return this.countMessage(tx, account.id, Math.floor(atMs / DAY_MS), limit);
      },
    };
  }

  private async countMessage(tx: WriteTx, accountId: string, day: number, limit: number): Promise<void> {
    const before = await this.counts.addMessages(tx, accountId, day, 1);
    if (before >= limit) throw dayFull(limit, day);
    tx.afterCommit((committed) => {
      const seen = this.daySeen.get(accountId);
      if (!committed || (seen?.day === day && seen.count > before)) return;
      this.daySeen.set(accountId, { day, count: before + 1 });
    });
  }
}

function checkBurst(count: number, limit: number, second: number): void {
  if (count <= limit) return;
  throw new HttpError(429, `burst rate limit of ${limit} requests per second exceeded; try again in a second`, {
    "Burst-RateLimit-Limit": String(limit),
    "Burst-RateLimit-Remaining": "0",
    "Burst-RateLimit-Reset": String(second + 1),
  });
}

function dayFull(limit: number, day: number): HttpError {
  return new HttpError(429, `daily message limit of ${limit} reached; it resets at 00:00 UTC`, {
    "RateLimit-Limit": String(limit),
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": String(((day + 1) * DAY_MS) / 1000),
  });
}

/** Requests that publish messages: the daily limit applies to them. */
const PUBLISHING = /^\/v2\/(publish|enqueue|batch|trigger)(\/|$)/;
/** The hosted service's operational requests: no burst limit. */
const OPERATIONAL = /^\/v2\/(publish|enqueue|batch|trigger|notify|wait)(\/|$)/;
