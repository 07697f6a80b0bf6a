/** What one delivery attempt came back with (the worker reports it; the outcome recorder records it). */
export interface DeliveryOutcome {
  ticket: number;
  messageId: string;
  /** Set when an HTTP answer arrived (any status). */
  status?: number;
  headers?: Array<[string, string]>;
  body?: Uint8Array;
  /** Set when no HTTP answer arrived: timeout, refused, DNS, reset. */
  error?: string;
  /** The attempt carried an injected fault (docs/test-double.md, Fault injection): kind and rule id. */
  fault?: InjectedFault;
  startedAt: number;
  durationMs: number;
}

/** Marks what a test's fault rule did, so a log reader tells an injected failure from a real one. */
export interface InjectedFault {
  kind: string;
  rule: string;
}
