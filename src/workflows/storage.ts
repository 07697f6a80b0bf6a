import type { Filter } from "../filters/filter.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { RunRecord, RunState, StepDeliveryState, StepDetails, StepEntry, StepError, Waiter } from "./model.ts";
import type { StoredWaiter } from "./run-rows.ts";

export type { StoredWaiter } from "./run-rows.ts";

/**
 * Filters of run listings (logs) and bulk cancel: the shared filters a run has (OR within one,
 * AND across them), `fromDate`/`toDate` bounding its creation time; `urls` are prefixes with
 * `urlPrefix`, and `messageIds` find the runs those messages belong to.
 */
export interface RunFilter
  extends Pick<Filter, "urls" | "hosts" | "paths" | "labels" | "callerIps" | "flowControlKeys" | "fromDate" | "toDate" | "workflowRunIds" | "workflowCreatedAts" | "messageIds"> {
  states?: RunState[];
  urlPrefix?: boolean;
  /** Exactly these runs: each one's id with its creation time (`workflowRuns=ID@TS,…`). */
  runs?: Array<{ runId: string; createdAt: number }>;
}

/**
 * Runs and their step lists, as every engine keeps them. The first group runs inside a write (`tx`);
 * the second group reads outside writes.
 */
export interface RunStorage {
  insertRun(tx: WriteTx, run: RunRecord): Promise<void>;
  /** Writes every field of a run back. */
  saveRun(tx: WriteTx, run: RunRecord): Promise<void>;
  getRun(tx: WriteTx, accountId: string, runId: string): Promise<RunRecord | undefined>;
  /** Appends an entry at the end of the run's list (its message not delivered yet, unless given); returns its position. */
  appendStep(tx: WriteTx, entry: NewStep): Promise<number>;
  /** The run's first entry: its trigger's payload. */
  firstStep(tx: WriteTx, accountId: string, runId: string): Promise<StepEntry | undefined>;
  /** The whole list (declared with `steps` or `settle`). */
  steps(tx: WriteTx, accountId: string, runId: string): Promise<StepEntry[]>;
  /** The run's entry of a message, declared with `steps` (a resumed run's list repeats the ids of the run it resumes). */
  stepOfMessage(tx: WriteTx, accountId: string, runId: string, messageId: string): Promise<StepEntry | undefined>;
  /** Points an entry at another message (the SDK's re-trigger of a run started without it). */
  retagStep(tx: WriteTx, entry: RetaggedStep): Promise<void>;
  /** How the delivery of a message of the run stands now. */
  setDelivery(
    tx: WriteTx,
    accountId: string,
    runId: string,
    messageId: string,
    state: StepDeliveryState,
    nextDeliveryAt?: number,
  ): Promise<void>;
  /** What the run's log needs of an entry, learnt after its publish. */
  setDetails(tx: WriteTx, accountId: string, runId: string, messageId: string, details: StepDetails): Promise<void>;
  /** A failed attempt of one of the run's messages (a step, a call, its failure function). */
  addError(tx: WriteTx, accountId: string, runId: string, messageId: string, e: StepError): Promise<void>;
  deleteRun(tx: WriteTx, accountId: string, runId: string): Promise<void>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;

  readRun(accountId: string, runId: string): Promise<RunRecord | undefined>;
  /** The run's list, up to and including position `upTo` when given. */
  readSteps(accountId: string, runId: string, upTo?: number): Promise<StepEntry[]>;
  readStepOfMessage(accountId: string, runId: string, messageId: string): Promise<StepEntry | undefined>;
  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): Promise<RunRecord[]>;
  /** Runs that ended but still have to settle (see `unsettled`). */
  unsettledRuns(limit: number): Promise<RunRecord[]>;
  /** The failed attempts of the run's messages, oldest first, by message id. */
  errors(accountId: string, runId: string): Promise<Map<string, StepError[]>>;
  /** The runs this run started with `context.invoke`, oldest first. */
  invokedBy(accountId: string, runId: string): Promise<RunRecord[]>;
  /**
   * Runs that ended before `beforeMs` leave with their steps (plan log retention), a bounded batch
   * per call, outside writes; returns how many left.
   */
  prune(accountId: string, beforeMs: number): Promise<number>;
}

/** An entry `appendStep` adds: its position is the list's end; its message is not delivered yet unless `state` says. */
export type NewStep = Omit<StepEntry, "position" | "state"> & { state?: StepDeliveryState };

/** What `retagStep` changes of an entry, and which entry (by its run and position). */
export type RetaggedStep = Pick<
  StepEntry,
  "accountId" | "runId" | "position" | "messageId" | "headers" | "retries" | "retryDelayExpr"
>;

/**
 * Waiting steps and the events kept for runs that wait for them later, as every engine keeps
 * them. The first group runs inside a write (`tx`; `waiting`, `due` and `takeKept` read, the rest
 * writes without reading); the last group reads outside writes.
 */
export interface WaitStorage {
  insert(tx: WriteTx, w: Waiter): Promise<void>;
  /** Every waiter of an event, or only those of one run. */
  waiting(tx: WriteTx, accountId: string, eventId: string, runId?: string): Promise<StoredWaiter[]>;
  /** False when it was already gone (notified or timed out meanwhile). */
  delete(tx: WriteTx, id: number): Promise<boolean>;
  /** Waiters whose deadline is at or before `nowMs`, earliest first. */
  due(tx: WriteTx, nowMs: number, limit: number): Promise<StoredWaiter[]>;
  keep(tx: WriteTx, accountId: string, runId: string, eventId: string, data: Uint8Array, nowMs: number): Promise<void>;
  /** Takes the oldest event kept for this run and event id, if any. */
  takeKept(tx: WriteTx, accountId: string, runId: string, eventId: string): Promise<Uint8Array | undefined>;
  /** A run that ended waits for nothing any more. */
  deleteRun(tx: WriteTx, accountId: string, runId: string): Promise<void>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;

  /** As `waiting`, outside a write. */
  readWaiting(accountId: string, eventId: string): Promise<StoredWaiter[]>;
  ofRun(accountId: string, runId: string): Promise<StoredWaiter[]>;
  /** The earliest deadline of any waiter, or null. */
  nextDeadline(): Promise<number | null>;
}
