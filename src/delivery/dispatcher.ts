import type { AccountRegistry } from "../accounts/accounts.ts";
import type { Clock } from "../core/clock.ts";
import type { Dialect } from "../core/dialect.ts";
import type { Logger } from "../core/log.ts";
import type { BackgroundService } from "../core/service.ts";
import type { WakeSignal } from "../core/wake.ts";
import type { ClaimOnInsert, MessageLifecycle } from "../messages/lifecycle.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { MessageRecord } from "../model/message.ts";
import type { Tracing } from "../model/trace.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";
import { runUntilStored, type StorageRetry } from "../store/until-stored.ts";
import type { Maybe } from "../util/maybe.ts";
import { releaseInOwnWrite, type DispatchGate } from "./gate.ts";
import type { InFlightAttempts } from "./in-flight.ts";
import { claimBatch } from "./claim-batch.ts";
import { DueTimer } from "./due-timer.ts";
import { WorkerHandover } from "./handover.ts";
import type { OutcomeRecorder } from "./outcome-recorder.ts";
import type { WorkerPool } from "./pool.ts";
import type { JobFault } from "./worker-protocol.ts";

const CLAIM_BATCH = 512;
/** Wall-clock pause before trying the database again after a storage error. */
const STORAGE_RETRY_MS = 500;

export interface DispatcherDeps {
  clock: Clock;
  config: { region: string };
  log: Logger;
  dialect: Dialect;
  accounts: AccountRegistry;
  commit: Transactor;
  store: MessageStorage;
  lifecycle: MessageLifecycle;
  pool: WorkerPool;
  inFlight: InFlightAttempts;
  recorder: OutcomeRecorder;
  gate: DispatchGate;
  /** Rung by whatever makes messages due; the dispatcher answers it. */
  wakeSignal: WakeSignal;
  /** A body to deliver instead of the stored one (a workflow step carries its run's steps); an engine may read it later. */
  deliveryBody?: (m: MessageRecord) => Maybe<Uint8Array | undefined>;
  maxInFlight?: number;
  /** A fault a test's rule injects into this attempt (the faults domain decides; it goes with the job). */
  fault?: (m: MessageRecord) => JobFault | undefined;
  /** Each attempt carries svcd's span for it in its `traceparent`. */
  tracing?: Tracing;
}

/**
 * The main thread's half of delivery: finds due messages through the `dispatch_at` index, claims
 * them and hands them to the workers (their outcomes go to the OutcomeRecorder). The wake signal
 * wakes it; a clock timer wakes it for the earliest future message. It never polls.
 */
export class Dispatcher implements BackgroundService {
  readonly name = "dispatcher";
  private readonly clock: Clock;
  private readonly store: MessageStorage;
  private readonly inFlight: InFlightAttempts;
  private readonly gate: DispatchGate;
  private readonly maxInFlight: number;
  /** Claimed in the commit that is under way, not yet handed to a worker (a cancel drops them). */
  private readonly claiming = new Map<string, MessageRecord>();
  /** The last claim pass found every due message (it did not stop for lack of room). */
  private caughtUp = false;
  private pumpScheduled = false;
  private readonly timer: DueTimer;
  private readonly handover: WorkerHandover;
  /** Between start and stop; before start nothing is claimed (recovery has to come first). */
  private isRunning = false;
  private readonly passObservers: Array<(afterMs: number | null) => void> = [];
  private recovery: StorageRetry | null = null;
  /** Stopped: a recovery still under way then does not start delivery. */
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {
    this.clock = deps.clock;
    this.store = deps.store;
    this.inFlight = deps.inFlight;
    this.gate = deps.gate;
    this.maxInFlight = deps.maxInFlight ?? 2048;
    this.timer = new DueTimer(deps.clock, () => this.wake());
    this.handover = new WorkerHandover({ ...deps, running: () => this.running });
    deps.wakeSignal.answerWith((dueAt) => this.wake(dueAt));
    deps.clock.onAdvance(() => this.wake());
  }

  /**
   * Messages in flight when the server last stopped are due again (delivery is at least once),
   * and so are those flow control held back then; then the first claim pass runs. When storage
   * cannot be written (a full disk after a crash), that recovery is tried again until it can:
   * the server answers meanwhile, and delivery starts once recovery committed.
   */
  async start(): Promise<void> {
    this.recovery = await runUntilStored("recovering the previous run", () => this.recover(), this.deps.log);
    if (this.stopped) this.recovery.cancel();
  }

  /** Why delivery has not started yet (recovery waits for storage), or null. */
  get waitingFor(): string | null {
    return this.recovery?.waitingFor ?? null;
  }

  private async recover(): Promise<void> {
    const now = this.clock.now();
    // One write: both kinds of recovery commit together or not at all (and are tried again).
    const { recovered, released } = await this.deps.commit.run(async (tx) => ({
      recovered: await this.store.recoverInFlight(tx, now),
      released: await this.gate.recover(tx, now),
    }));
    if (recovered > 0) this.deps.log.info("re-delivering messages that were in flight at the last stop", { count: recovered });
    if (released > 0) this.deps.log.info("released messages held by flow control at the last stop", { count: released });
    if (this.stopped) return;
    this.isRunning = true;
    this.wake();
  }

  /** No new claims; what is claimed and not yet with a worker stays ACTIVE, due again at the next start. */
  stop(): void {
    this.stopped = true;
    this.recovery?.cancel();
    this.isRunning = false;
    this.timer.cancel();
    this.passDone(null);
  }

  /**
   * Calls `fn` after every claim pass, once what was due is with the workers, with the clock's
   * time after the pass; with null when the dispatcher stopped instead. Read-only observers
   * (the control plane's probe).
   */
  observePasses(fn: (afterMs: number | null) => void): void {
    this.passObservers.push(fn);
  }

  /**
   * A claim pass is scheduled. Everything that can make a message due (a publish, an outcome, the
   * dispatch timer, a clock jump) wakes the dispatcher, so without one nothing new is due.
   */
  get passPending(): boolean {
    return this.pumpScheduled;
  }

  /**
   * `dueAt`: the earliest time the caller's new messages become due. When the armed timer fires
   * no later than that, the timer's pump will find them, so this one is skipped: publishing
   * delayed messages then costs the dispatcher nothing.
   */
  wake(dueAt?: number): void {
    if (this.pumpScheduled || !this.running) return;
    if (dueAt !== undefined && this.timer.firesBy(dueAt) && dueAt > this.clock.now()) return;
    this.pumpScheduled = true;
    // The claim joins the group commit of this tick: one transaction with the publishes and the
    // outcomes of the same tick, instead of a commit of its own (a commit costs more than the
    // claim of a message). Still pending until the claimed messages are with the workers.
    setImmediate(() => this.pump());
  }

  /** Forgets a cancelled message's attempt in flight (inside the cancel's write `tx`): its late outcome is ignored. */
  async forget(tx: WriteTx, messageId: string): Promise<void> {
    const claimed = this.claiming.get(messageId);
    if (claimed) {
      // Cancelled in the same commit that claimed it: it never reaches a worker (if the cancel is stored).
      this.claiming.delete(messageId);
      tx.afterCommit((committed) => void (committed || this.claiming.set(messageId, claimed)));
      await this.gate.released(tx, claimed, this.clock.now());
      return;
    }
    const attempt = this.inFlight.disown(messageId);
    if (!attempt) return;
    // Its answer is ignored from here on, but the attempt ends only with the cancel's commit: a
    // cancel that is not stored gives it back, and its answer is then recorded (else the message
    // would stay ACTIVE with nobody to finish it).
    tx.afterCommit((committed) => {
      this.inFlight.settleDisown(attempt, committed);
      if (!committed) return;
      // An attempt still waiting in a worker's flow-control lane is dropped there.
      this.deps.pool.cancel(attempt.ticket);
      releaseInOwnWrite(this.deps, [attempt.message], this.clock.now());
    });
  }

  /** Claimed and not yet handed to a worker, or in a worker. */
  isInFlight(messageId: string): boolean {
    return this.inFlight.has(messageId) || this.claiming.has(messageId);
  }

  get running(): boolean {
    return this.isRunning;
  }

  /**
   * Asked inside the write that stores `m`, before its row is written. When it is due now and
   * nothing older waits (the last claim pass found every due message), it is stored claimed and
   * goes to a worker right after that commit, instead of a claim pass one commit and one turn
   * later. Messages of a queue or a flow-control key always go through the pass, which keeps
   * their order and limits.
   */
  readonly claimOnInsert: ClaimOnInsert = {
    wants: (m, nowMs) => {
      if (!this.running || !this.caughtUp || m.flow || m.queueName) return false;
      if (m.state !== "CREATED" || m.dispatchAt === null || m.dispatchAt > nowMs) return false;
      return this.inFlight.size + this.claiming.size < this.maxInFlight;
    },
    // Its row is written claimed and its events are emitted: from here on it is in flight.
    took: (tx, m) => {
      this.claiming.set(m.id, m);
      tx.afterCommit((committed) => {
        // Not claimed after all (its write failed), or cancelled in the same commit.
        if (!this.claiming.delete(m.id) || !committed) return;
        if (!this.running) return; // stays ACTIVE: due again at the next start
        this.handover.submit(m);
      });
    },
  };

  private pump(): void {
    if (!this.running) {
      this.pumpScheduled = false;
      return;
    }
    const now = this.clock.now();
    this.deps.commit.run((tx) => this.claimDue(tx, now)).then(
      async (claimed) => {
        this.pumpScheduled = false;
        // Stopped while the claim was committing: those stay ACTIVE and are due again at the next start.
        if (!this.running) {
          for (const m of claimed) this.claiming.delete(m.id);
          return this.passDone(null);
        }
        // Handed to the workers only once ACTIVE is committed, unless cancelled meanwhile.
        for (const m of claimed) if (this.claiming.delete(m.id)) this.handover.submit(m);
        // The time after the commit, not the claim's: writes of the same commit (a callback made
        // by an outcome) may be due at an instant after the claim looked, and must not count as
        // "later" when deciding to wake again or to report idle.
        const after = this.clock.now();
        try {
          await this.armTimer(after);
        } catch (error) {
          return this.retryLater("reading the next due time", error);
        }
        this.passDone(after);
      },
      (error) => {
        this.pumpScheduled = false;
        // The claim was rolled back, and with it what it counted in memory (see claimDue).
        this.caughtUp = false;
        // Without a retry the due messages would wait for the next publish to wake the dispatcher.
        this.retryLater("claiming due messages", error);
      },
    );
  }

  /** A storage error must neither end the process nor stall delivery: log it and try again. */
  private retryLater(what: string, error: unknown): void {
    const detail = { error: String((error as Error)?.message ?? error) };
    this.deps.log.error(`${what} failed; trying again in ${STORAGE_RETRY_MS} ms`, detail);
    setTimeout(() => this.wake(), STORAGE_RETRY_MS);
  }

  /** Runs inside the write `tx`: claims what is due, up to the room left in flight. */
  private async claimDue(tx: WriteTx, now: number): Promise<MessageRecord[]> {
    const all: MessageRecord[] = [];
    this.caughtUp = false;
    // Not stored (the write failed, or runs again after a lock conflict): not claimed either.
    tx.afterCommit((committed) => committed || all.forEach((m) => this.claiming.delete(m.id)));
    let room = this.maxInFlight - this.inFlight.size - this.claiming.size;
    while (room > 0) {
      const limit = Math.min(room, CLAIM_BATCH);
      const { claimed, seen } = await claimBatch(this.deps, tx, now, limit);
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

  private passDone(afterMs: number | null): void {
    for (const observe of this.passObservers) observe(afterMs);
  }

  private async armTimer(now: number): Promise<void> {
    const next = await this.store.nextDueAt();
    if (next === null) return;
    if (next <= now) {
      if (this.inFlight.size < this.maxInFlight) this.wake();
      return;
    }
    this.timer.arm(next);
  }
}
