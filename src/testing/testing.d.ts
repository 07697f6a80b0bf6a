/** `svcd/testing`: start an svcd for a test suite (Vitest, Jest, node:test, bun test). */

export interface StartOptions {
  /** `manual`: time moves only with advance() (default `real`). */
  clock?: "real" | "manual";
  /** `upstash` for code using the official SDKs (default `svc`). */
  dialect?: "svc" | "upstash";
  /** The config file's content (accounts, plans, URL Groups, schedules, queues...), written to a temp file. */
  config?: Record<string, unknown>;
  /** More command-line flags, e.g. `["--retry-delay-scale", "0.001"]`. */
  args?: string[];
  /** Environment variables for the svcd process (added to this process's). */
  env?: Record<string, string>;
  /** The svcd executable; default: $SVCD_BINARY, this platform's `@svcd/*` package, or the repository's sources. */
  binary?: string;
  /** Default `warn`. */
  logLevel?: "debug" | "info" | "warn" | "error";
  /** Default 30000. */
  startTimeoutMs?: number;
}

/** A message as its log tells it: the newest entry, and every state it went through, oldest first. */
export interface MessageSummary {
  messageId: string;
  state: string;
  states: string[];
  url?: string;
  body?: string;
  [field: string]: unknown;
}

export interface MessageCounts {
  inFlight: number;
  due: number;
  delayed: number;
  waiting: number;
}

export type DlqEntry = Record<string, unknown> & { messageId: string; dlqId: string; responseStatus: number };

export interface Svcd {
  /** `http://127.0.0.1:<free port>`. */
  url: string;
  /** The default account's messaging token. */
  token: string;
  /**
   * The variables svcd printed at start, ready to spread into `process.env`: SVC_URL, SVC_TOKEN,
   * SVC_CURRENT_SIGNING_KEY, SVC_NEXT_SIGNING_KEY, ...; with `dialect: "upstash"` also
   * QSTASH_URL, QSTASH_TOKEN, QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY.
   */
  env: Record<string, string>;
  /** The svcd process. */
  pid: number;
  /** fetch() against svcd with the token set. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** What svcd printed lately (stdout and stderr). */
  output(): string;
  /** Wipes the account's messages, DLQ, logs, URL Groups, schedules, queues and statistics. */
  reset(): Promise<{ reset: string; parts: string[] }>;
  /** Resolves once nothing is due now or in flight, callbacks included. */
  flush(options?: { timeoutMs?: number }): Promise<{ idle: true }>;
  /** Manual clock: moves forward (`"1h"`, `"1h30m"`, `"90s"`, or ms), firing every timer due on the way, in order. */
  advance(
    duration: string | number,
    options?: { flush?: boolean; timeoutMs?: number },
  ): Promise<{ now: number; mode: "manual"; timersFired: number }>;
  /** The server's clock, Unix ms. */
  now(): Promise<number>;
  /**
   * Resolves once no message is in flight, due or delayed (retries included). With the manual
   * clock a delayed message rejects at once: only advance() brings it due.
   */
  waitForIdle(options?: { timeoutMs?: number }): Promise<MessageCounts>;
  /** The account's messages in publish order; any log filter (`url`, `label`, ...) and `state` (its current one). */
  messages(filter?: Record<string, string | string[]>): Promise<MessageSummary[]>;
  /** Every DLQ entry; any DLQ filter. */
  dlq(filter?: Record<string, string>): Promise<DlqEntry[]>;
  /** Stops svcd (it is also killed when this process exits). */
  stop(): Promise<void>;
}

export function startSvcd(options?: StartOptions): Promise<Svcd>;
/** `"1h30m"`, `"90s"`, `"2d"`, `"250ms"` or ms -> ms. */
export function toMs(duration: string | number): number;
export function findSvcd(binary?: string): { command: string; args: string[] };
