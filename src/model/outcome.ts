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
  startedAt: number;
  durationMs: number;
}
