import type { AppContext } from "../context/app-context.ts";
import type { BackgroundService } from "../core/service.ts";
import type { Wake } from "../core/wake.ts";
import { copiesOf, type PublishService } from "../messages/publish.ts";
import { refusedByStorage } from "../store/errors.ts";
import { nextRunAfter } from "./cron.ts";
import { replayInput } from "./replay.ts";
import type { Write } from "../store/transactor.ts";
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
  async start(): Promise<void> {
    for (const row of await this.store.all()) this.arm(row, row.next_schedule_time);
  }

  /** Another process changed the schedules: timers follow the stored definitions again. */
  async rearm(): Promise<void> {
    if (this.stopped) return;
    const rows = await this.store.all();
    if (this.stopped) return;
    const stored = new Set<string>();
    for (const row of rows) {
      stored.add(timerKey(row.account_id, row.id));
      this.arm(row, row.next_schedule_time);
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

  /** Arms the schedule's timer for `atMs` (its definition `row` says when the slot after that is). */
  arm(row: Armed, atMs: number | null): void {
    this.disarm(row.account_id, row.id);
    if (atMs === null || this.stopped) return;
    const key = timerKey(row.account_id, row.id);
    this.timers.set(key, this.ctx.clock.at(atMs, () => this.fire(row, atMs)));
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

  /**
   * `again`: a slot the storage refused, tried again; the timer of the next slot is armed already.
   * Resolves once the next slot is armed and the trigger's write is queued (a manual clock's jump
   * waits for that); the write goes on by itself.
   */
  private async fire(armed: Armed, plannedAt: number, again = false): Promise<void> {
    const { account_id: accountId, id, revision } = armed;
    if (!again) this.timers.delete(timerKey(accountId, id));
    if (this.stopped) return;
    const now = this.ctx.clock.now();
    let next: number | null;
    try {
      next = nextRunAfter(armed.cron, Math.max(now, plannedAt));
    } catch (error) {
      this.ctx.log.error("schedule has an unusable cron; it stays disarmed", { scheduleId: id, error: String(error) });
      return;
    }
    // Armed before anything is awaited: a manual clock's jump fires the slots it passes one by one.
    if (!again) this.arm(armed, next);
    const row = await this.store.get(null, accountId, id);
    if (!row || row.revision !== revision || this.stopped) return;
    const paused = row.paused === 1;
    const produce = paused ? null : await this.producer(row, now);
    // The trigger counts even when it produced nothing (its URL Group was deleted since).
    void this.ctx.commit
      .run(async (tx) => {
        const current = await this.store.get(tx, accountId, id);
        if (!current || current.revision !== revision) return;
        // Another process sharing the schedules fired this slot already.
        if (!(await this.store.takeTrigger(tx, accountId, id, revision, plannedAt))) return;
        // Paused when the timer fired, or since: the trigger is skipped, the next one still moves.
        if (paused || current.paused === 1) return this.store.setNext(tx, accountId, id, revision, next);
        let ids: string[] = [];
        try {
          // A savepoint of its own: a message refused half-way (a queue over the plan) leaves none.
          if (produce) ids = await tx.nested(produce);
        } catch (error) {
          this.ctx.log.warn("schedule trigger not published", { scheduleId: id, error: String((error as Error).message ?? error) });
        }
        const states = Object.fromEntries(ids.map((messageId) => [messageId, "IN_PROGRESS"]));
        await this.store.recordTrigger(tx, accountId, id, revision, now, next, JSON.stringify(states));
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
          this.ctx.clock.at(this.ctx.clock.now() + RETRY_MS, () => this.fire(armed, plannedAt, true));
        }
      });
  }

  /**
   * Builds the trigger's messages now (validated as a publish is; they carry this instant as their
   * creation time) and returns the write that stores them. Null when they cannot be published any
   * more (the account left the config, the URL Group was deleted): the trigger still counts.
   */
  private async producer(row: ScheduleRow, now: number): Promise<Write<string[]> | null> {
    const account = this.ctx.accounts.byId(row.account_id);
    if (!account) return null;
    try {
      const input = replayInput(row, account);
      const { messages, options } = await this.publisher.prepare(null, input);
      return async (tx) => {
        const published = await this.publisher.store(tx, copiesOf(messages), options, input, now);
        return published.filter((r) => !r.deduplicated).map((r) => r.messageId);
      };
    } catch (error) {
      this.ctx.log.warn("schedule trigger not published", { scheduleId: row.id, error: String((error as Error).message ?? error) });
      return null;
    }
  }
}

/** What a timer needs of its schedule's definition. */
type Armed = Pick<ScheduleRow, "account_id" | "id" | "revision" | "cron">;

const timerKey = (accountId: string, id: string) => `${accountId}/${id}`;

/** How soon a trigger the storage refused goes again. */
const RETRY_MS = 500;
