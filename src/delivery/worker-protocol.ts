/** Messages between the dispatcher (main thread, owns SQLite) and the delivery workers. */
import type { FlowControl } from "../model/message.ts";
import type { FlowLaneStats } from "../flow-control/gate.ts";
import type { FlowWorkerMessage } from "../flow-control/worker-messages.ts";
import type { Packed } from "./wire.ts";

export interface DeliveryJob {
  /** Dispatch ticket: unique per attempt, so a late answer of an old attempt is recognised. */
  ticket: number;
  messageId: string;
  url: string;
  method: string;
  headers: Array<[string, string]>;
  body: Uint8Array;
  timeoutMs: number;
  signingKey: string;
  issuer: string;
  /** `Svc-Signature` or the dialect's equivalent. */
  signatureHeader: string;
  /** Answer bodies are kept up to this many bytes. */
  maxResponseBytes: number;
  /** Whether a 2XX answer's headers come back with the outcome (any other answer's always do). */
  headersOf2xx: boolean;
  flow?: FlowControl;
  /** A fault a test asked for (the faults domain decides on the main thread; the worker carries it out). */
  fault?: JobFault;
}

/** docs/test-double.md, Fault injection: what the worker does differently for one attempt. */
export interface JobFault {
  kind: "duplicate" | "delay" | "reorder" | "timeout-after-answer";
  /** The rule that fired, named in the outcome and so in the log entry. */
  rule: string;
  /** delay: wait this long before the request; reorder: wait this long outside the flow-control lane. */
  delayMs?: number;
}

export type ToWorker =
  /** The jobs handed over in one turn of the main thread's event loop. */
  | { type: "deliver"; jobs: Packed }
  | { type: "ping"; id: number }
  /** The server runs on a manual clock: from now on the worker's time is exactly `nowMs`. */
  | { type: "clock"; nowMs: number }
  /** Live counters of one flow-control lane (`key`) or of every lane whose key starts with `prefix`. */
  | { type: "flow-stats"; id: number; key?: string; prefix?: string }
  /** The attempt was cancelled: drop it if it still waits in a flow-control lane. */
  | { type: "cancel"; ticket: number }
  /** Shutting down: give back, unstarted, every job still waiting in a flow-control lane. */
  | { type: "release-waiting" }
  /** Tests and fault drills only (WorkerPool.crashWorker): the worker dies as a real crash would. */
  | { type: "crash"; how: "exit" | "throw" }
  | FlowWorkerMessage;

/**
 * `busyUs` on the messages a worker sends anyway: the CPU time its thread has spent running since
 * it started, in microseconds (what `svcd_worker_busy_seconds_total` reports).
 */
export type FromWorker =
  /** The outcomes of the attempts that ended in one turn of the worker's event loop. */
  | { type: "outcomes"; outcomes: Packed; busyUs: number }
  | { type: "pong"; id: number; workerId: number; busyUs: number }
  | { type: "flow-stats"; id: number; stats: FlowLaneStats[] }
  /** Jobs given back unstarted: no attempt was made, so they have no outcome. */
  | { type: "released"; tickets: number[] };
