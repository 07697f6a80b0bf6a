import type { Filter } from "../filters/filter.ts";
import type { Maybe } from "../util/maybe.ts";
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
 * Runs and their step lists, as every engine keeps them. The first group runs inside a write; the
 * second group reads outside writes and may answer later.
 */
export interface RunStorage {
  insertRun(run: RunRecord): void;
  /** Writes every field of a run back. */
  saveRun(run: RunRecord): void;
  getRun(accountId: string, runId: string): RunRecord | undefined;
  /** Appends an entry at the end of the run's list (its message not delivered yet, unless given); returns its position. */
  appendStep(entry: Omit<StepEntry, "position" | "state"> & { state?: StepDeliveryState }): number;
  /** The run's first entry: its trigger's payload. */
  firstStep(accountId: string, runId: string): StepEntry | undefined;
  /** The whole list (declared with `steps` or `settle`). */
  steps(accountId: string, runId: string): StepEntry[];
  /** The run's entry of a message, declared with `steps` (a resumed run's list repeats the ids of the run it resumes). */
  stepOfMessage(accountId: string, runId: string, messageId: string): StepEntry | undefined;
  /** Points an entry at another message (the SDK's re-trigger of a run started without it). */
  retagStep(entry: Pick<StepEntry, "accountId" | "runId" | "position" | "messageId" | "headers" | "retries" | "retryDelayExpr">): void;
  /** How the delivery of a message of the run stands now. */
  setDelivery(accountId: string, runId: string, messageId: string, state: StepDeliveryState, nextDeliveryAt?: number): void;
  /** What the run's log needs of an entry, learnt after its publish. */
  setDetails(accountId: string, runId: string, messageId: string, details: StepDetails): void;
  /** A failed attempt of one of the run's messages (a step, a call, its failure function). */
  addError(accountId: string, runId: string, messageId: string, e: StepError): void;
  deleteRun(accountId: string, runId: string): void;
  deleteAccount(accountId: string): void;

  readRun(accountId: string, runId: string): Maybe<RunRecord | undefined>;
  /** The run's list, up to and including position `upTo` when given. */
  readSteps(accountId: string, runId: string, upTo?: number): Maybe<StepEntry[]>;
  readStepOfMessage(accountId: string, runId: string, messageId: string): Maybe<StepEntry | undefined>;
  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): Maybe<RunRecord[]>;
  /** Runs that ended but still have to settle (see `unsettled`). */
  unsettledRuns(limit: number): Maybe<RunRecord[]>;
  /** The failed attempts of the run's messages, oldest first, by message id. */
  errors(accountId: string, runId: string): Maybe<Map<string, StepError[]>>;
  /** The runs this run started with `context.invoke`, oldest first. */
  invokedBy(accountId: string, runId: string): Maybe<RunRecord[]>;
  /** Runs that ended before `beforeMs` leave with their steps (plan log retention), a bounded batch per call; returns how many left. */
  prune(accountId: string, beforeMs: number): Maybe<number>;
}

/**
 * Waiting steps and the events kept for runs that wait for them later, as every engine keeps
 * them. `waiting`, `due` and `takeKept` run inside a write; the rest of the
 * first group writes without reading; the last group reads outside writes.
 */
export interface WaitStorage {
  insert(w: Waiter): void;
  /** Every waiter of an event, or only those of one run. */
  waiting(accountId: string, eventId: string, runId?: string): StoredWaiter[];
  /** False when it was already gone (notified or timed out meanwhile). */
  delete(id: number): boolean;
  /** Waiters whose deadline is at or before `nowMs`, earliest first. */
  due(nowMs: number, limit: number): StoredWaiter[];
  keep(accountId: string, runId: string, eventId: string, data: Uint8Array, nowMs: number): void;
  /** Takes the oldest event kept for this run and event id, if any. */
  takeKept(accountId: string, runId: string, eventId: string): Uint8Array | undefined;
  /** A run that ended waits for nothing any more. */
  deleteRun(accountId: string, runId: string): void;
  deleteAccount(accountId: string): void;

  /** As `waiting`, outside a write. */
  readWaiting(accountId: string, eventId: string): Maybe<StoredWaiter[]>;
  ofRun(accountId: string, runId: string): Maybe<StoredWaiter[]>;
  /** The earliest deadline of any waiter, or null. */
  nextDeadline(): Maybe<number | null>;
}
