import type { ServerConfig } from "../config/config.ts";
import type { Clock } from "../core/clock.ts";
import type { Dialect } from "../core/dialect.ts";
import type { Logger } from "../core/log.ts";
import type { BackgroundService } from "../core/service.ts";
import type { Wake } from "../core/wake.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import { isStorageUnavailable } from "../store/errors.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";
import type { DispatchGate } from "./gate.ts";
import type { Attempt, InFlightAttempts } from "./in-flight.ts";
import { decideAfterAttempt, type AttemptDecision } from "./retry-policy.ts";

/** How long delivery outcomes gather before they are recorded together. */
const OUTCOME_BATCH_MS = 5;
/** Wall-clock pause before trying the database again after a storage error. */
const STORAGE_RETRY_MS = 500;

/** In-memory consequences of recording outcomes, kept apart so a rolled-back batch can undo them. */
export interface OutcomeRecorderDeps {
  config: Pick<ServerConfig, "retryDelayScale">;
  clock: Clock;
  dialect: Dialect;
  log: Logger;
  commit: Transactor;
  inFlight: InFlightAttempts;
  lifecycle: MessageLifecycle;
  gate: DispatchGate;
  wake: Wake;
  /** Whether this process still holds a message's attempt (the store answers). */
  claims: Pick<MessageStorage, "stillClaimed">;
  /**
   * Why a 2XX answer is not one the message's destination may give (a workflow run's start
   * answered by an endpoint that runs no workflow): the attempt then fails for good with it. Asked
   * inside the write `tx` that records the outcome.
   */
  refuseAnswer?: (tx: WriteTx, m: MessageRecord, outcome: DeliveryOutcome) => Promise<string | undefined>;
}

/** The batch's messages whose attempts were open when it asked the store, and those the store says are still held. */
interface BatchClaims {
  asked: Set<string>;
  held: Set<string>;
}

/**
 * Records what delivery attempts came back with: delivered, retried later, or failed into the DLQ
 * (the retry policy decides). Outcomes gather for a few ms and are recorded in one savepoint of
 * the group commit; a bug while recording one of them does not hold back the rest.
 */
export class OutcomeRecorder implements BackgroundService {
  readonly name = "outcome recorder";
  private outcomes: DeliveryOutcome[] = [];
  private scheduled = false;
  private stopped = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly deps: OutcomeRecorderDeps) {}

  /** Outcomes received and not yet recorded (or waiting for storage to answer again). */
  get pending(): number {
    return this.outcomes.length + this.recording;
  }

  /** Outcomes whose write is under way (an engine that writes asynchronously has closed their attempts already). */
  private recording = 0;

  /** Receives one attempt's outcome (from a worker, or made up for an attempt that could not start). */
  readonly add = (outcome: DeliveryOutcome): void => {
    this.outcomes.push(outcome);
    if (this.scheduled) return;
    this.scheduled = true;
    // Outcomes gather for a few ms: at a steady trickle each would otherwise cost a commit of its
    // own, while nobody waits for them (the receiver already has the message).
    setTimeout(() => void this.flush(), OUTCOME_BATCH_MS);
  };

  start(): void {}

  /** Records what is left; the attempts the workers gave up at the deadline stay ACTIVE for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.flush();
  }

  /** Resolves once the outcomes received so far are committed (or their write failed). */
  private flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.outcomes;
    this.outcomes = [];
    if (batch.length === 0) {
      this.deps.wake();
      return Promise.resolve();
    }
    // Recorded in the group commit of this tick. Until it commits, the attempts are still in
    // flight for the dispatcher's idle check.
    this.recording += batch.length;
    return this.deps.commit.run((tx) => this.recordBatch(tx, batch)).then(
      () => {
        this.recording -= batch.length;
        this.deps.wake();
      },
      (error) => {
        this.recording -= batch.length;
        // Nothing of the batch was stored (lock held past the busy timeout, disk full): the
        // attempts stay in flight (the failed write gave them back) and are recorded once storage
        // answers again. After a stop they stay ACTIVE in the database and are delivered again at
        // the next start.
        this.outcomes = batch.concat(this.outcomes);
        if (this.stopped) return;
        this.scheduled = true;
        this.deps.log.error(`recording delivery outcomes failed; trying again in ${STORAGE_RETRY_MS} ms`, {
          error: String((error as Error)?.message ?? error),
        });
        this.retryTimer = setTimeout(() => void this.flush(), STORAGE_RETRY_MS);
      },
    );
  }

  /**
   * Records a batch under one savepoint. A storage error fails the whole write (retried later).
   * Any other error is a bug in recording one outcome: the batch is rolled back, its in-memory
   * effects undone, and its outcomes recorded one savepoint each, so the others still land and the
   * faulty one stays ACTIVE, to be delivered again at the next start. (A savepoint per outcome
   * on every batch cost a fifth of the delivery throughput.)
   */
  private async recordBatch(tx: WriteTx, batch: DeliveryOutcome[]): Promise<void> {
    const { log } = this.deps;
    const finished: MessageRecord[] = [];
    // One read for the batch: which of its attempts are still this process's.
    const asked = this.claimedIds(batch);
    const claims: BatchClaims = { asked: new Set(asked), held: await this.deps.claims.stillClaimed(tx, asked) };
    try {
      await tx.nested(async (tx) => {
        for (const outcome of batch) await this.record(tx, outcome, finished, claims);
      });
    } catch (error) {
      // The savepoint gave the batch's attempts back.
      if (isStorageUnavailable(error)) throw error;
      finished.length = 0;
      for (const outcome of batch) {
        try {
          const one: MessageRecord[] = [];
          await tx.nested((tx) => this.record(tx, outcome, one, claims));
          finished.push(...one);
        } catch (failure) {
          if (isStorageUnavailable(failure)) throw failure;
          // Its attempt is closed all the same: the message stays ACTIVE until the next start.
          this.close(tx, outcome);
          log.error("recording a delivery outcome failed", {
            messageId: outcome.messageId,
            error: String((failure as Error)?.stack ?? failure),
          });
        }
      }
    }
    await this.release(tx, finished);
  }

  /** Closes the outcome's attempt for the write `tx`: open again if the write is not stored. */
  private close(tx: WriteTx, outcome: DeliveryOutcome): Attempt | undefined {
    const attempt = this.deps.inFlight.close(outcome.ticket);
    if (attempt)
      tx.afterCommit((committed) => {
        if (!committed) this.deps.inFlight.restore(attempt);
      });
    return attempt;
  }

  /** The messages of the batch's attempts still in flight. */
  private claimedIds(batch: DeliveryOutcome[]): string[] {
    return batch.flatMap((o) => this.deps.inFlight.peek(o.ticket)?.message.id ?? []);
  }

  /** Flow control learns of finished attempts only once their outcomes are recorded. */
  private async release(tx: WriteTx, messages: MessageRecord[]): Promise<void> {
    const now = this.deps.clock.now();
    for (const m of messages) await this.deps.gate.released(tx, m, now);
  }

  private async record(tx: WriteTx, outcome: DeliveryOutcome, finished: MessageRecord[], claims: BatchClaims): Promise<void> {
    const { clock, lifecycle, dialect, config, inFlight } = this.deps;
    const open = inFlight.peek(outcome.ticket);
    // Taken away by a cancel not stored yet (a write before this one, or in a transaction in flight),
    // or given back by one that was not stored since the batch asked the store: the answer goes in
    // a later batch, once the cancel is settled.
    if (open ? !claims.asked.has(open.message.id) : inFlight.disownPending(outcome.ticket)) {
      tx.afterCommit((stored) => stored && this.add(outcome));
      return;
    }
    const attempt = this.close(tx, outcome);
    if (!attempt) return;
    const m = attempt.message;
    const now = clock.now();
    if (!claims.held.has(m.id)) {
      // Handed back to the others while this attempt ran (this process was presumed dead: another
      // process delivers it again), or cancelled through another process: not recorded.
      this.deps.log.warn("delivery outcome ignored: the message is no longer this node's (handed back, or cancelled through another node)", { messageId: m.id });
      finished.push(m);
      return;
    }
    const refused = this.deps.refuseAnswer && (await this.deps.refuseAnswer(tx, m, outcome));
    const decision: AttemptDecision = refused ? { kind: "failed", error: refused } : decideAfterAttempt(outcome, {
      retried: m.retried,
      maxRetries: m.maxRetries,
      retryDelayExpr: m.retryDelayExpr,
      nonRetryableHeader: `${dialect.prefix}-NonRetryable-Error`,
      delayScale: config.retryDelayScale,
      nowMs: now,
    });
    if (decision.kind === "delivered") await lifecycle.delivered(tx, m, outcome, now);
    else if (decision.kind === "retry") await lifecycle.retrying(tx, m, outcome, decision.at, decision.error, now);
    else await lifecycle.failed(tx, m, outcome, decision.error, now);
    finished.push(m);
  }
}
