import type { Account } from "../accounts/accounts.ts";
import { HttpError } from "../core/errors.ts";
import { WorkflowMetric, type UsageRecorder } from "../metrics/usage.ts";
import type { MessageRecord } from "../model/message.ts";
import type { Tracing } from "../model/trace.ts";
import { headersOf, pairsOfMap } from "./headers.ts";
import type { RunRecord } from "./model.ts";
import { bytesOf } from "./raw-steps.ts";
import { endRun, invokeResult, type RunEnding } from "./run-state.ts";
import { refusedByStorage } from "../store/errors.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";
import type { RunStorage, WaitStorage } from "./storage.ts";

const METRIC: Record<RunEnding, string> = {
  finished: WorkflowMetric.runCompleted,
  cancelled: WorkflowMetric.runCanceled,
  failed: WorkflowMetric.runFailed,
};

/** Ends runs: the state change, durable with the write that causes it. */
export class RunEndings {
  constructor(
    private readonly runs: RunStorage,
    private readonly usage: UsageRecorder,
    /** The run's span is made once its end is committed. */
    private readonly tracing?: Tracing,
  ) {}

  /**
   * Inside the write `tx`: ends the run as `ending` with `details`, marked unsettled until what it
   * left behind is dealt with. False when it had already ended.
   */
  async end(
    tx: WriteTx,
    run: RunRecord,
    ending: RunEnding,
    nowMs: number,
    details: Partial<RunRecord> = {},
  ): Promise<boolean> {
    const state = endRun(run.state, ending);
    if (!state) return false;
    Object.assign(run, details, { state, completedAt: nowMs, unsettled: true });
    await this.runs.saveRun(tx, run);
    this.usage.countStored(tx, run.accountId, METRIC[ending], 1, nowMs);
    const { trace } = run;
    const tracing = this.tracing;
    if (tracing && trace) {
      const span = { runId: run.runId, url: run.url, state, createdAt: run.createdAt, completedAt: nowMs, labels: run.labels, trace };
      tx.afterCommit((committed) => committed && tracing.runEnded(span));
    }
    return true;
  }
}

/** What settling needs of the message engine, inside the write `tx`. */
export interface RunMessages {
  /** The message if it still waits or is in flight. */
  get(tx: WriteTx, accountId: string, messageId: string): Promise<MessageRecord | undefined>;
  /** An attempt of it is under way (in this process, or in another one sharing the storage). */
  inFlight(m: MessageRecord): boolean;
  /** Cancels it (an attempt in flight is disowned); false if it was already gone. */
  cancel(tx: WriteTx, m: MessageRecord, nowMs: number): Promise<boolean>;
  /** Publishes a message as a client would (inside the write); returns its id. */
  publish(
    tx: WriteTx,
    account: Account,
    url: string,
    headers: Headers,
    body: Uint8Array,
    nowMs: number,
  ): Promise<string>;
}

/** A message the settler cancels after the write that found it left over. */
interface Leftover {
  accountId: string;
  messageId: string;
}

/** A run that ended and has to settle. */
interface EndedRun {
  accountId: string;
  runId: string;
}

/** What the settler does after a write: settle runs it ended, cancel messages it found left over. */
export interface SettleWork {
  runs: EndedRun[];
  leftovers: Leftover[];
}

/**
 * Settling asked for inside a delivery's write (which must not publish or cancel itself): the
 * settler, built later, does it in a write of its own right after that write commits.
 */
export class SettleRequests {
  private answer: ((work: SettleWork) => void) | null = null;

  /** The run ended in the write `tx`: settle it after it. */
  settleAfterCommit(tx: WriteTx, accountId: string, runId: string): void {
    tx.afterCommit((committed) => committed && this.answer?.({ runs: [{ accountId, runId }], leftovers: [] }));
  }

  /** A message of an ended run came back for another attempt: cancel it after the write `tx`. */
  cancelAfterCommit(tx: WriteTx, accountId: string, messageId: string): void {
    tx.afterCommit((committed) => committed && this.answer?.({ runs: [], leftovers: [{ accountId, messageId }] }));
  }

  answerWith(fn: (work: SettleWork) => void): void {
    if (this.answer) throw new Error("settle requests already have their settler");
    this.answer = fn;
  }
}

/** How soon settling the storage refused is tried again. */
const RETRY_MS = 500;

/**
 * Deals with what an ended run left behind: its messages still waiting are cancelled, its waits
 * end, and a run started by `context.invoke` hands its result to the invoking run. A run ended by
 * a request settles in that request's write; one ended by a delivery's outcome settles in a write
 * of its own right after (the outcome's write must not publish), found again after a crash.
 *
 * An attempt under way when its run finished or failed is spared: it has reached the endpoint
 * already (the SDK ends a run from inside the delivery of its last step, and the delivery that
 * published a failing step may not be answered yet), and its outcome is recorded as it comes; a
 * retry it would need is cancelled then. Cancelling a run disowns its attempts too.
 */
export class RunSettler {
  private retryLeftovers: Leftover[] = [];
  private retryRuns: SettleWork["runs"] = [];
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(
    private readonly runs: RunStorage,
    private readonly waits: WaitStorage,
    private readonly messages: RunMessages,
    private readonly accounts: { byId(id: string): Account | undefined },
    private readonly commit: Pick<Transactor, "run">,
    private readonly clock: { now(): number },
    private readonly log: { error(message: string, fields?: Record<string, unknown>): void },
  ) {}

  /**
   * Inside the write `tx` that read the run: cancels its messages (see the class), ends its waits,
   * answers its invoker.
   */
  async settle(tx: WriteTx, run: RunRecord, nowMs: number): Promise<void> {
    const spareInFlight = run.state !== "RUN_CANCELED";
    for (const entry of await this.runs.steps(tx, run.accountId, run.runId)) {
      const m = await this.messages.get(tx, run.accountId, entry.messageId);
      if (m && !(spareInFlight && this.messages.inFlight(m))) await this.messages.cancel(tx, m, nowMs);
    }
    await this.waits.deleteRun(tx, run.accountId, run.runId);
    await this.answerInvoker(tx, run, nowMs);
    run.unsettled = false;
    await this.runs.saveRun(tx, run);
  }

  /**
   * In a write of its own (queued at once: it commits with the writes of this turn): settles
   * `work`'s runs and cancels its leftovers. With nothing given, every run left unsettled (at
   * start: a crash between a run's end and its settling), found first.
   */
  schedule(work?: SettleWork): void {
    if (!work) {
      void this.runs.unsettledRuns(1000).then(
        (runs) => this.schedule({ runs, leftovers: [] }),
        (error) => this.failed(error),
      );
      return;
    }
    // What a write that failed left goes again with this one.
    const runs = [...this.retryRuns, ...work.runs];
    const leftovers = [...this.retryLeftovers, ...work.leftovers];
    this.retryRuns = [];
    this.retryLeftovers = [];
    if (runs.length === 0 && leftovers.length === 0) return;
    this.commit
      .run(async (tx) => {
        const now = this.clock.now();
        for (const { accountId, messageId } of leftovers) {
          const m = await this.messages.get(tx, accountId, messageId);
          if (m && !this.messages.inFlight(m)) await this.messages.cancel(tx, m, now);
        }
        for (const { accountId, runId } of runs) {
          const run = await this.runs.getRun(tx, accountId, runId);
          if (run?.unsettled) await this.settle(tx, run, now);
        }
      })
      .catch((error) => {
        // Leftovers go again with the next work. What the storage refused goes again shortly too
        // (a run that invoked one of these runs waits for its answer); after any other failure the
        // runs keep their marks, for the next start.
        this.retryLeftovers.push(...leftovers);
        this.failed(error);
        if (!refusedByStorage(error) || this.stopped) return;
        this.retryRuns.push(...runs);
        this.retryTimer ??= setTimeout(() => {
          this.retryTimer = null;
          this.schedule({ runs: [], leftovers: [] });
        }, RETRY_MS);
      });
  }

  /** No write is tried again from now on (the server stops). */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private failed(error: unknown): void {
    this.log.error("settling ended workflow runs failed", { error: String((error as Error)?.message ?? error) });
  }

  /** `context.invoke` waits for this run: its result (or how it ended) becomes the invoker's next step. */
  private async answerInvoker(tx: WriteTx, run: RunRecord, nowMs: number): Promise<void> {
    const invoker = run.invoker;
    const account = this.accounts.byId(run.accountId);
    if (!invoker || !account) return;
    const step = { ...invoker.step, stepType: "Invoke", out: JSON.stringify(invokeResult(run)) };
    try {
      const headers = headersOf(pairsOfMap(invoker.headers));
      await this.messages.publish(tx, account, invoker.workflowUrl, headers, bytesOf(JSON.stringify(step)), nowMs);
    } catch (error) {
      // The invoking run is over (cancelled meanwhile): nobody waits for the answer.
      if (!(error instanceof HttpError)) throw error;
    }
  }
}
