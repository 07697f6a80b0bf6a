import type { Clock } from "../core/clock.ts";
import { HttpError } from "../core/errors.ts";
import type { MessageListener } from "../model/events.ts";

/** What the rate limits read of an account: its id and its plan's two limits (`Infinity`: none). */
interface Limited {
  id: string;
  limits: { burstPerSecond: number; maxMessagesPerDay: number };
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The hosted service's request limits, per account, on the injected clock:
 * - a burst limit per second on every messaging request but the operational ones (publish,
 *   enqueue, batch, trigger, notify, wait), answered 429 with `Burst-RateLimit-*`;
 * - a daily message limit (UTC days): once the day's messages reach it, publish, enqueue, batch
 *   and trigger are answered 429 with `RateLimit-*` until the next day.
 * Counted in memory by each node: a restart, or another node, starts from zero.
 */
export class RequestLimits {
  private readonly burst = new Map<string, { second: number; count: number }>();
  private readonly daily = new Map<string, { day: number; count: number }>();

  constructor(private readonly clock: Clock) {}

  /** Throws the 429 this request meets, else counts it against the burst limit. */
  admit(account: Limited, method: string, path: string): void {
    const now = this.clock.now();
    if (PUBLISHING.test(path) && method === "POST") return this.checkDaily(account, now);
    if (OPERATIONAL.test(path) || !path.startsWith("/v2/")) return;
    const limit = account.limits.burstPerSecond;
    if (!Number.isFinite(limit)) return;
    const second = Math.floor(now / 1000);
    let window = this.burst.get(account.id);
    if (!window || window.second !== second) this.burst.set(account.id, (window = { second, count: 0 }));
    const headers = (remaining: number) => ({
      "Burst-RateLimit-Limit": String(limit),
      "Burst-RateLimit-Remaining": String(remaining),
      "Burst-RateLimit-Reset": String(second + 1),
    });
    if (window.count >= limit)
      throw new HttpError(429, `burst rate limit of ${limit} requests per second exceeded; try again in a second`, headers(0));
    window.count++;
  }

  /** Counts each new message of an account against its daily limit (callbacks, the system's own, do not count). */
  listener(accounts: { byId(id: string): Limited | undefined }): MessageListener {
    return {
      created: ({ message, atMs }) => {
        if (message.kind !== "message") return;
        const account = accounts.byId(message.accountId);
        if (!account || !Number.isFinite(account.limits.maxMessagesPerDay)) return;
        this.dayOf(account.id, atMs).count++;
      },
    };
  }

  private checkDaily(account: Limited, now: number): void {
    const limit = account.limits.maxMessagesPerDay;
    if (!Number.isFinite(limit)) return;
    const today = this.dayOf(account.id, now);
    if (today.count < limit) return;
    throw new HttpError(429, `daily message limit of ${limit} reached; it resets at 00:00 UTC`, {
      "RateLimit-Limit": String(limit),
      "RateLimit-Remaining": "0",
      "RateLimit-Reset": String(((today.day + 1) * DAY_MS) / 1000),
    });
  }

  private dayOf(accountId: string, atMs: number) {
    const day = Math.floor(atMs / DAY_MS);
    let entry = this.daily.get(accountId);
    if (!entry || entry.day !== day) this.daily.set(accountId, (entry = { day, count: 0 }));
    return entry;
  }
}

/** Requests that publish messages: the daily limit applies to them. */
const PUBLISHING = /^\/v2\/(publish|enqueue|batch|trigger)(\/|$)/;
/** The hosted service's operational requests: no burst limit. */
const OPERATIONAL = /^\/v2\/(publish|enqueue|batch|trigger|notify|wait)(\/|$)/;
