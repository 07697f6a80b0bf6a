import type { AppContext } from "../context/app-context.ts";
import { withoutCredentials } from "../core/log.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import type { MessageRecord } from "../model/message.ts";
import type { MessageStore } from "../messages/store.ts";
import { buildJob } from "./job.ts";
import type { WorkerPool } from "./pool.ts";
import { isStorageUnavailable } from "../store/errors.ts";
import { decideAfterAttempt } from "./retry-policy.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";

const CLAIM_BATCH = 512;
/** How long delivery outcomes gather before they are recorded together. */
const OUTCOME_BATCH_MS = 5;
/** Wall-clock pause before trying the database again after a storage error. */
const STORAGE_RETRY_MS = 500;

/** In-memory consequences of recording outcomes, kept apart so a rolled-back batch can undo them. */
interface RecordEffects {
  undo: Array<() => void>;
  released: MessageRecord[];
}

interface InFlight {
  message: MessageRecord;
  ticket: number;
}

/**
 * A check on every claimed message before it goes to a worker (flow control caps what one key may
 * have in the workers at once, so a key with a huge backlog cannot take all of `maxInFlight`).
 * Both calls run inside the dispatcher's transactions.
 */
export interface DispatchGate {
  /** True: dispatch it now. False: the gate has set the message aside (it is not claimed). */
  admit(m: MessageRecord, nowMs: number): boolean;
  /** An admitted message's attempt is over (recorded, or disowned by a cancel). */
  released(m: MessageRecord, nowMs: number): void;
}

/**
 * The main thread's half of delivery: finds due messages through the `dispatch_at` index, claims
 * them, hands them to the workers and records each outcome. Publishing wakes it; a clock timer
 * wakes it for the earliest future message. It never polls.
 */
export class Dispatcher {
  private readonly inFlight = new Map<number, InFlight>();
  private readonly ticketOf = new Map<string, number>();
  /** Claimed in the commit that is under way, not yet handed to a worker (a cancel drops them). */
  private readonly claiming = new Map<string, MessageRecord>();
  /** What the claim pass under way has claimed (given back to the gate if its write fails). */
  private passClaims: MessageRecord[] = [];
  /** The last claim pass found every due message (it did not stop for lack of room). */
  private caughtUp = false;
  private outcomes: DeliveryOutcome[] = [];
  private nextTicket = 1;
  private pumpScheduled = false;
  private outcomesScheduled = false;
  private timerAt = Infinity;
  private cancelTimer: (() => void) | null = null;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  private pumpWaiters: Array<() => void> = [];
  private readonly claimTx;
  private readonly outcomeTx;
  /** Optional; set once at wiring time (flow control). */
  gate: DispatchGate | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly store: MessageStore,
    private readonly lifecycle: MessageLifecycle,
    private readonly pool: WorkerPool,
    private readonly maxInFlight = 2048,
  ) {
    this.claimTx = ctx.db.transaction((nowMs: number, limit: number) => {
      const due = store.due(nowMs, limit);
      const claimed: MessageRecord[] = [];
      for (const m of due) {
        if (this.gate && !this.gate.admit(m, nowMs)) continue;
        store.claim(m.id);
        lifecycle.activated(m, nowMs);
        claimed.push(m);
      }
      return { claimed, seen: due.length };
    });
    this.outcomeTx = ctx.db.transaction((batch: DeliveryOutcome[], effects: RecordEffects) => {
      for (const outcome of batch) this.record(outcome, effects);
    });
    ctx.clock.onAdvance(() => this.wake());
  }

  /** After a restart, messages that were in flight are due again (delivery is at least once). */
  recover(): number {
    return this.store.recoverInFlight(this.ctx.clock.now());
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Attempts handed to the workers since start; with `inFlightCount` it tells that anything changed. */
  get dispatchedCount(): number {
    return this.nextTicket - 1;
  }

  /**
   * `dueAt`: the earliest time the caller's new messages become due. When the armed timer fires
   * no later than that, the timer's pump will find them, so this one is skipped: publishing
   * delayed messages then costs the dispatcher nothing.
   */
  wake(dueAt?: number): void {
    if (this.pumpScheduled || this.stopped) return;
    if (dueAt !== undefined && dueAt >= this.timerAt && dueAt > this.ctx.clock.now()) return;
    this.pumpScheduled = true;
    // The claim joins the group commit of this tick: one transaction with the publishes and the
    // outcomes of the same tick, instead of a commit of its own (a commit costs more than the
    // claim of a message). Still pending until the claimed messages are with the workers.
    setImmediate(() => this.pump());
  }

  /** Forgets an in-flight attempt whose message was cancelled: its late outcome is ignored. */
  forget(messageId: string): void {
    const claimed = this.claiming.get(messageId);
    if (claimed) {
      // Cancelled in the same commit that claimed it: it never reaches a worker.
      this.claiming.delete(messageId);
      this.gate?.released(claimed, this.ctx.clock.now());
      return;
    }
    const ticket = this.ticketOf.get(messageId);
    if (ticket === undefined) return;
    this.ticketOf.delete(messageId);
    const entry = this.inFlight.get(ticket);
    this.inFlight.delete(ticket);
    // An attempt still waiting in a worker's flow-control lane is dropped there.
    this.pool.cancel(ticket);
    if (entry) this.gate?.released(entry.message, this.ctx.clock.now());
  }

  isInFlight(messageId: string): boolean {
    return this.ticketOf.has(messageId) || this.claiming.has(messageId);
  }

  /** Resolves once nothing is due now and nothing is in flight. */
  whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.wake();
    });
  }

  /** Resolves after the next pump: what is due now was claimed and handed to the workers. */
  whenPumped(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      this.pumpWaiters.push(resolve);
      this.wake();
    });
  }

  /**
   * A pump is scheduled. Everything that can make a message due (a publish, an outcome, the
   * dispatch timer, a clock jump) wakes the dispatcher, so without one nothing new is due.
   */
  get pumpPending(): boolean {
    return this.pumpScheduled;
  }

  /** Nothing in flight, no outcome waiting to be recorded, no pump scheduled (so nothing due). */
  isIdle(): boolean {
    return this.inFlight.size === 0 && this.outcomes.length === 0 && !this.pumpScheduled;
  }

  onOutcome = (outcome: DeliveryOutcome): void => {
    this.outcomes.push(outcome);
    if (this.outcomesScheduled) return;
    this.outcomesScheduled = true;
    // Outcomes gather for a few ms: at a steady trickle each would otherwise cost a commit of its
    // own, while nobody waits for them (the receiver already has the message).
    setTimeout(() => this.flushOutcomes(), OUTCOME_BATCH_MS);
  };

  flushOutcomes(): void {
    this.outcomesScheduled = false;
    const batch = this.outcomes;
    this.outcomes = [];
    if (batch.length === 0) {
      this.wake();
      return;
    }
    const entries = batch.map((o) => this.inFlight.get(o.ticket));
    // Recorded in the group commit of this tick (see wake). Until it commits, the attempts are
    // still in flight for isIdle, and a flush at shutdown (ctx.commit.flush) stores them.
    this.ctx.commit.run(() => this.recordBatch(batch)).then(
      () => this.wake(),
      (error) => {
        // Nothing of the batch was stored (lock held past the busy timeout, disk full): the
        // attempts stay in flight and are recorded once storage answers again. After a stop they
        // stay ACTIVE in the database and are delivered again at the next start.
        for (const e of entries) {
          if (!e) continue;
          this.inFlight.set(e.ticket, e);
          this.ticketOf.set(e.message.id, e.ticket);
        }
        this.outcomes = batch.concat(this.outcomes);
        if (this.stopped) return;
        this.outcomesScheduled = true;
        this.retryLater("recording delivery outcomes", error, () => this.flushOutcomes());
      },
    );
  }

  /** A storage error must neither end the process nor stall delivery: log it and try again. */
  private retryLater(what: string, error: unknown, again: () => void): void {
    this.ctx.log.error(`${what} failed; trying again in ${STORAGE_RETRY_MS} ms`, {
      error: String((error as Error)?.message ?? error),
    });
    setTimeout(again, STORAGE_RETRY_MS);
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.resolvePumpWaiters();
  }

  private pump(): void {
    if (this.stopped) {
      this.pumpScheduled = false;
      return;
    }
    const now = this.ctx.clock.now();
    this.ctx.commit.run(() => this.claimDue(now)).then(
      (claimed) => {
        this.pumpScheduled = false;
        this.passClaims = [];
        // Stopped while the claim was committing: those stay ACTIVE and are due again at the next start.
        if (this.stopped) {
          for (const m of claimed) this.claiming.delete(m.id);
          return this.resolvePumpWaiters();
        }
        // Handed to the workers only once ACTIVE is committed, unless cancelled meanwhile.
        for (const m of claimed) if (this.claiming.delete(m.id)) this.submit(m);
        // The time after the commit, not the claim's: writes of the same commit (a callback made
        // by an outcome) may be due at an instant after the claim looked, and must not count as
        // "later" when deciding to wake again or to report idle.
        const after = this.ctx.clock.now();
        try {
          this.armTimer(after);
        } catch (error) {
          this.retryLater("reading the next due time", error, () => this.wake());
          return;
        }
        this.notifyIdle(after);
        this.resolvePumpWaiters();
      },
      (error) => {
        this.pumpScheduled = false;
        // The claim was rolled back: the gate gets back what it admitted.
        for (const m of this.passClaims) if (this.claiming.delete(m.id)) this.gate?.released(m, now);
        this.passClaims = [];
        this.caughtUp = false;
        // Without a retry the due messages would wait for the next publish to wake the dispatcher.
        this.retryLater("claiming due messages", error, () => this.wake());
      },
    );
  }

  /** Runs inside the group commit: claims what is due, up to the room left in flight. */
  private claimDue(now: number): MessageRecord[] {
    const all: MessageRecord[] = [];
    this.passClaims = all;
    this.caughtUp = false;
    let room = this.maxInFlight - this.inFlight.size - this.claiming.size;
    while (room > 0) {
      const limit = Math.min(room, CLAIM_BATCH);
      const { claimed, seen } = this.claimTx(now, limit) as { claimed: MessageRecord[]; seen: number };
      for (const m of claimed) {
        all.push(m);
        this.claiming.set(m.id, m);
      }
      room -= claimed.length;
      if (seen < limit) {
        this.caughtUp = true;
        break;
      }
    }
    return all;
  }

  /**
   * Called inside the write that has just stored `m`. When it is due now and nothing older waits
   * (the last claim pass found every due message), it is claimed in that same commit and goes to
   * a worker right after it, instead of a claim pass one commit and one turn later. Messages of a
   * queue or a flow-control key always go through the pass, which keeps their order and limits.
   */
  claimStored(m: MessageRecord, nowMs: number): boolean {
    if (this.stopped || !this.caughtUp || m.flow || m.queueName) return false;
    if (m.state !== "CREATED" || m.dispatchAt === null || m.dispatchAt > nowMs) return false;
    if (this.inFlight.size + this.claiming.size >= this.maxInFlight) return false;
    this.store.claim(m.id);
    this.lifecycle.activated(m, nowMs);
    m.state = "ACTIVE";
    m.dispatchAt = null;
    this.claiming.set(m.id, m);
    this.ctx.commit.afterCommit((committed) => {
      // Not claimed after all (its write failed), or cancelled in the same commit.
      if (!this.claiming.delete(m.id) || !committed) return;
      if (this.stopped) return; // stays ACTIVE: due again at the next start
      this.submit(m);
    });
    return true;
  }

  private resolvePumpWaiters(): void {
    const waiters = this.pumpWaiters;
    this.pumpWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private submit(m: MessageRecord): void {
    const account = this.ctx.accounts.byId(m.accountId);
    const ticket = this.nextTicket++;
    this.inFlight.set(ticket, { message: m, ticket });
    this.ticketOf.set(m.id, ticket);
    if (!account) {
      // The account left the config: the message can never be signed, so it fails visibly.
      this.onOutcome({ ticket, messageId: m.id, error: "account no longer configured", startedAt: this.ctx.clock.now(), durationMs: 0 });
      return;
    }
    this.pool.submit(buildJob(m, account, this.ctx.dialect, ticket));
  }

  /**
   * Records a batch under one savepoint. A storage error fails the whole write (retried later).
   * Any other error is a bug in recording one outcome: the batch is rolled back, its in-memory
   * effects undone, and its outcomes recorded one savepoint each, so the others still land and the
   * faulty one stays ACTIVE, to be delivered again at the next start. (A savepoint per outcome
   * on every batch cost a fifth of the delivery throughput.)
   */
  private recordBatch(batch: DeliveryOutcome[]): void {
    const effects: RecordEffects = { undo: [], released: [] };
    try {
      this.outcomeTx(batch, effects);
    } catch (error) {
      if (isStorageUnavailable(error)) throw error;
      for (const restore of effects.undo.reverse()) restore();
      for (const outcome of batch) {
        const one: RecordEffects = { undo: [], released: [] };
        try {
          this.outcomeTx([outcome], one);
          this.releaseGate(one.released);
        } catch (failure) {
          if (isStorageUnavailable(failure)) throw failure;
          this.ctx.log.error("recording a delivery outcome failed", {
            messageId: outcome.messageId,
            error: String((failure as Error)?.stack ?? failure),
          });
        }
      }
      return;
    }
    this.releaseGate(effects.released);
  }

  /** Flow-control lanes learn of finished attempts only once their outcomes are recorded. */
  private releaseGate(messages: MessageRecord[]): void {
    if (!this.gate) return;
    const now = this.ctx.clock.now();
    for (const m of messages) this.gate.released(m, now);
  }

  private record(outcome: DeliveryOutcome, effects: RecordEffects): void {
    const entry = this.inFlight.get(outcome.ticket);
    if (!entry) return;
    this.inFlight.delete(outcome.ticket);
    this.ticketOf.delete(entry.message.id);
    effects.undo.push(() => {
      this.inFlight.set(entry.ticket, entry);
      this.ticketOf.set(entry.message.id, entry.ticket);
    });
    const m = entry.message;
    const now = this.ctx.clock.now();
    this.ctx.log.info("delivery", {
      messageId: m.id,
      url: withoutCredentials(m.url),
      status: outcome.status ?? outcome.error,
      attempt: m.retried + 1,
      ms: Math.round(outcome.durationMs),
    });
    const decision = decideAfterAttempt(outcome, {
      retried: m.retried,
      maxRetries: m.maxRetries,
      retryDelayExpr: m.retryDelayExpr,
      nonRetryableHeader: `${this.ctx.dialect.prefix}-NonRetryable-Error`,
      delayScale: this.ctx.config.retryDelayScale,
      nowMs: now,
    });
    if (decision.kind === "delivered") this.lifecycle.delivered(m, outcome, now);
    else if (decision.kind === "retry") this.lifecycle.retrying(m, outcome, decision.at, decision.error, now);
    else this.lifecycle.failed(m, outcome, decision.error, now);
    effects.released.push(m);
  }

  private armTimer(now: number): void {
    const next = this.store.nextDueAt();
    if (next === null) return;
    if (next <= now) {
      if (this.inFlight.size < this.maxInFlight) this.wake();
      return;
    }
    if (next >= this.timerAt) return;
    this.cancelTimer?.();
    this.timerAt = next;
    this.cancelTimer = this.ctx.clock.at(next, () => {
      this.timerAt = Infinity;
      this.cancelTimer = null;
      this.wake();
    });
  }

  private notifyIdle(now: number): void {
    if (this.idleWaiters.length === 0) return;
    const next = this.store.nextDueAt();
    if (this.inFlight.size > 0 || this.outcomes.length > 0 || (next !== null && next <= now)) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
