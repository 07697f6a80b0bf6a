/**
 * Load generators. Both sides of every throughput comparison use the same one: `hammer` runs
 * `wrk` when it is installed (native, far cheaper per request than a Bun fetch loop, so it does
 * not cap the servers it drives) and N concurrent keep-alive fetch loops otherwise (closed loop:
 * each connection sends its next request when the previous answer has been read). `openLoop` is a
 * fixed-rate sender for latency; `closedLoop` is also the plain fetch-loop baseline itself.
 */
import { BENCH } from "./config.ts";
import { wallNow } from "./stats.ts";
import { wrkLoad, wrkPath } from "./wrk.ts";

export interface RequestSpec {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Uint8Array<ArrayBuffer>;
}

export interface ClosedLoopOptions {
  /** Request i (0-based); the same spec object may be returned every time. */
  request: (i: number) => RequestSpec;
  connections: number;
  /** Stop after this many requests (count mode)… */
  requests?: number;
  /** …or after warm-up + this long (duration mode); only answers inside the window count. */
  durationMs?: number;
  warmupMs?: number;
  /** Sees each answer (already read as text); used to collect message ids. */
  onAnswer?: (i: number, status: number, text: string) => void;
}

export interface LoadResult {
  /** Answers counted (2xx), inside the window in duration mode. */
  ok: number;
  /** Every 2xx answer, warm-up included. */
  total: number;
  failed: number;
  seconds: number;
  rps: number;
  /** First non-2xx answer or error, to make a broken run obvious. */
  firstError?: string;
}

export async function closedLoop(opts: ClosedLoopOptions): Promise<LoadResult> {
  const warmupMs = opts.warmupMs ?? 0;
  const t0 = performance.now();
  const windowStart = t0 + warmupMs;
  const windowEnd = opts.durationMs !== undefined ? windowStart + opts.durationMs : Infinity;
  const limit = opts.requests ?? Infinity;
  let next = 0;
  let ok = 0;
  let total = 0;
  let failed = 0;
  let firstError: string | undefined;
  let lastAnswer = t0;

  const loop = async () => {
    for (;;) {
      const now = performance.now();
      if (now >= windowEnd || next >= limit) return;
      const i = next++;
      const spec = opts.request(i);
      try {
        const res = await fetch(spec.url, { method: spec.method ?? "POST", headers: spec.headers, body: spec.body });
        const text = await res.text();
        const at = performance.now();
        const counted = at >= windowStart && at < windowEnd;
        if (res.status >= 200 && res.status < 300) {
          total++;
          if (counted || opts.durationMs === undefined) ok++;
          opts.onAnswer?.(i, res.status, text);
        } else {
          failed++;
          firstError ??= `HTTP ${res.status}: ${text.slice(0, 200)}`;
        }
        lastAnswer = at;
      } catch (error) {
        failed++;
        firstError ??= String(error);
        await Bun.sleep(1);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.connections }, loop));
  const seconds = opts.durationMs !== undefined ? opts.durationMs / 1000 : (lastAnswer - t0) / 1000;
  return { ok, total, failed, seconds, rps: ok / seconds, firstError };
}

export interface OpenLoopOptions {
  /** Requests per second, spread evenly. */
  rate: number;
  seconds: number;
  /** Sends request i; `sentAt` is its scheduled wall-clock send time in ms. */
  send: (i: number) => Promise<void>;
}

/**
 * Sends at a steady rate regardless of how fast answers come back (no coordinated omission):
 * request i is due at start + i / rate; late ticks send every overdue request at once.
 */
export async function openLoop(opts: OpenLoopOptions): Promise<{ sent: number; failed: number }> {
  const total = Math.round(opts.rate * opts.seconds);
  const intervalMs = 1000 / opts.rate;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  let failed = 0;
  let i = 0;
  while (i < total) {
    const now = performance.now();
    while (i < total && start + i * intervalMs <= now) {
      pending.push(opts.send(i).catch(() => void failed++));
      i++;
    }
    const wait = start + i * intervalMs - performance.now();
    if (wait > 0) await Bun.sleep(wait);
  }
  await Promise.all(pending);
  return { sent: total, failed };
}

export { wallNow };

const WRK = wrkPath();

/** Which closed-loop generator `hammer` runs, for the report. */
export const GENERATOR = WRK
  ? `wrk (${BENCH.wrkThreads} thread${BENCH.wrkThreads > 1 ? "s" : ""}, ${BENCH.connections} connections)`
  : `Bun fetch loops (${BENCH.connections} connections; wrk not installed)`;

/**
 * A closed-loop load of one fixed request: for a duration after a warm-up, or a count of requests
 * (in count mode wrk may send up to one request per connection more; they are not counted).
 */
export async function hammer(
  spec: Required<Pick<RequestSpec, "url" | "body">> & { method?: string; headers: Record<string, string> },
  opts: { connections: number; durationMs?: number; warmupMs?: number; requests?: number },
): Promise<LoadResult> {
  if (WRK)
    return wrkLoad(WRK, {
      url: spec.url,
      method: spec.method ?? "POST",
      headers: spec.headers,
      body: spec.body,
      connections: opts.connections,
      threads: BENCH.wrkThreads,
      durationMs: opts.durationMs,
      warmupMs: opts.warmupMs,
      requests: opts.requests,
    });
  return closedLoop({ request: () => spec, ...opts });
}
