/** Messages between the dispatcher (main thread, owns SQLite) and the delivery workers. */

export interface FlowControl {
  key: string;
  rate?: number;
  periodMs: number;
  parallelism?: number;
}

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
  flow?: FlowControl;
}

export interface DeliveryOutcome {
  ticket: number;
  messageId: string;
  /** Set when an HTTP answer arrived (any status). */
  status?: number;
  headers?: Array<[string, string]>;
  body?: Uint8Array;
  /** Set when no HTTP answer arrived: timeout, refused, DNS, reset. */
  error?: string;
  startedAt: number;
  durationMs: number;
}

export type ToWorker =
  | { type: "deliver"; job: DeliveryJob }
  | { type: "ping"; id: number }
  | { type: "clock"; nowMs: number }
  | { type: "flow-stats"; id: number; key?: string }
  /** Tests and fault drills only (WorkerPool.crashWorker): the worker dies as a real crash would. */
  | { type: "crash"; how: "exit" | "throw" };

export type FromWorker =
  | { type: "outcome"; outcome: DeliveryOutcome }
  | { type: "pong"; id: number; workerId: number }
  | { type: "flow-stats"; id: number; stats: unknown[] };
