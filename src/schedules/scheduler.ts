import type { AppContext } from "../context/app-context.ts";
import type { BackgroundService } from "../core/service.ts";
import type { Wake } from "../core/wake.ts";
import type { PublishService } from "../messages/publish.ts";
import { refusedByStorage } from "../store/errors.ts";
import { nextRunAfter } from "./cron.ts";
import { replayInput } from "./replay.ts";
import type { ScheduleRow, ScheduleStorage } from "./storage.ts";

/**
 * One clock timer per schedule. A trigger re-arms the next one at once (so a manual-clock jump
 * fires every trigger it passes), then, in one transaction, publishes the messages and records
 * `lastScheduleTime`, `nextScheduleTime` and the new messages' states. Because the trigger and its
 * messages commit together, a restart never fires the same trigger twice; a trigger missed while
 * the server was down is still due at start and fires once, then the schedule continues from now.
 */
export class Scheduler implements BackgroundService {
  readonly name = "scheduler";
  private readonly timers = new Map<string, () => void>();
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly store: ScheduleStorage,
    private readonly publisher: PublishService,
    private readonly wake: Wake,
  ) {}

  /** Arms every stored schedule (due ones fire right away: the catch-up after a stop). */
  start(): void {
    for (const row of this.store.all()) this.arm(row.account_id, row.id, row.revision, row.next_schedule_time);
  }

  /** Another process changed the schedules: timers follow the stored definitions again. */
  rearm(): void {
    if (this.stopped) return;
    const stored = new Set<string>();
    for (const row of this.store.all()) {
      stored.add(timerKey(row.account_id, row.id));
      this.arm(row.account_id, row.id, row.revision, row.next_schedule_time);
    }
    for (const [key, cancel] of this.timers) {
      if (stored.has(key)) continue;
      cancel();
      this.timers.delete(key);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }

  arm(accountId: string, id: string, revision: number, atMs: number | null): void {
    this.disarm(accountId, id);
    if (atMs === null || this.stopped) return;
    const key = timerKey(accountId, id);
    this.timers.set(key, this.ctx.clock.at(atMs, () => this.fire(accountId, id, revision, atMs)));
  }

  disarm(accountId: string, id: string): void {
    const key = timerKey(accountId, id);
    this.timers.get(key)?.();
    this.timers.delete(key);
  }

  /** Forgets every timer of an account (its schedules are being deleted). */
  disarmAccount(accountId: string): void {
    for (const [key, cancel] of this.timers) {
      if (key.startsWith(`${accountId}/`)) {
        cancel();
        this.timers.delete(key);
      }
    }
  }

  /** `again`: a slot the storage refused, tried again; the timer of the next slot is armed already. */
  private fire(accountId: string, id: string, revision: number, plannedAt: number, again = false): void {
    if (!again) this.timers.delete(timerKey(accountId, id));
    if (this.stopped) return;
    const row = this.store.get(accountId, id);
    if (!row || row.revision !== revision) return;
    const now = this.ctx.clock.now();
    let next: number | null;
    try {
      next = nextRunAfter(row.cron, Math.max(now, plannedAt));
    } catch (error) {
      this.ctx.log.error("schedule has an unusable cron; it stays disarmed", { scheduleId: id, error: String(error) });
      return;
    }
    if (!again) this.arm(accountId, id, revision, next);
    const paused = row.paused === 1;
    const produce = paused ? null : this.producer(row, now);
    // The trigger counts even when it produced nothing (its URL Group was deleted since).
    this.ctx.commit
      .run(() => {
        const current = this.store.get(accountId, id);
        if (!current || current.revision !== revision) return;
        // Another process sharing the schedules fired this slot already.
        if (!this.store.takeTrigger(accountId, id, revision, plannedAt)) return;
        // Paused when the timer fired, or since: the trigger is skipped, the next one still moves.
        if (paused || current.paused === 1) return this.store.setNext(accountId, id, revision, next);
        let ids: string[] = [];
        try {
          // A savepoint of its own: a message refused half-way (a queue over the plan) leaves none.
          if (produce) ids = this.ctx.commit.nested(produce);
        } catch (error) {
          this.ctx.log.warn("schedule trigger not published", { scheduleId: id, error: String((error as Error).message ?? error) });
        }
        const states = Object.fromEntries(ids.map((messageId) => [messageId, "IN_PROGRESS"]));
        this.store.recordTrigger(accountId, id, revision, now, next, JSON.stringify(states));
      })
      .then(() => this.wake())
      .catch((error) => {
        // Refused by the storage (its transaction failed): the slot goes again shortly, late
        // rather than never. Else the next slot's trigger would find the stored next run time
        // still at this one (on PostgreSQL it would take it for a slot another node fired, and
        // the schedule would fire no more until a restart).
        const refused = refusedByStorage(error);
        this.ctx.log.error(refused ? "schedule trigger failed; trying again shortly" : "schedule trigger failed", {
          scheduleId: id,
          error: String(error),
        });
        if (refused && !this.stopped) {
          this.ctx.clock.at(this.ctx.clock.now() + RETRY_MS, () => this.fire(accountId, id, revision, plannedAt, true));
        }
      });
  }

  /**
   * Builds the trigger's messages now (validated as a publish is; they carry this instant as their
   * creation time) and returns the write that stores them. Null when they cannot be published any
   * more (the account left the config, the URL Group was deleted): the trigger still counts.
   */
  private producer(row: ScheduleRow, now: number): (() => string[]) | null {
    const account = this.ctx.accounts.byId(row.account_id);
    if (!account) return null;
    try {
      const input = replayInput(row, account);
      const { messages, options } = this.publisher.prepare(input);
      return () =>
        this.publisher
          .store(messages, options, input, now)
          .filter((r) => !r.deduplicated)
          .map((r) => r.messageId);
    } catch (error) {
      this.ctx.log.warn("schedule trigger not published", { scheduleId: row.id, error: String((error as Error).message ?? error) });
      return null;
    }
  }
}

const timerKey = (accountId: string, id: string) => `${accountId}/${id}`;

/** How soon a trigger the storage refused goes again. */
const RETRY_MS = 500;
