/**
 * Sizes and durations of every measurement. The full run takes about 6 minutes on a 2-core box
 * and stops itself at the deadline; BENCH_QUICK=1 shrinks everything for a smoke run. Each size can be overridden by its own
 * env variable (BENCH_<NAME>), e.g. BENCH_BACKLOG=200000.
 */
const quick = process.env.BENCH_QUICK === "1";

function size(name: string, full: number, small: number): number {
  const raw = process.env[`BENCH_${name}`];
  if (raw !== undefined && raw !== "" && Number.isFinite(Number(raw))) return Number(raw);
  return quick ? small : full;
}

export const BENCH = {
  quick,
  /** Closed-loop load: 64 keep-alive connections, each sending the next request on the answer. */
  connections: size("CONNECTIONS", 64, 64),
  bodyBytes: size("BODY_BYTES", 1024, 1024),
  /** Threads of wrk, when it is the generator (BENCH_GENERATOR=bun forces the Bun fetch loops): one
   *  drives bare Bun.serve past 90k req/s here, and leaves the servers the other core. */
  wrkThreads: size("WRK_THREADS", 1, 1),
  /** Seconds of load per publish throughput side, after the warm-up. */
  publishSeconds: size("PUBLISH_SECONDS", 8, 2),
  warmupSeconds: size("WARMUP_SECONDS", 2, 0.5),
  /** Messages for the end-to-end delivery measurement. */
  deliveryMessages: size("DELIVERY_MESSAGES", 50_000, 5_000),
  /** Steady publish rate and duration of the latency measurement. */
  latencyRate: size("LATENCY_RATE", 1000, 1000),
  latencySeconds: size("LATENCY_SECONDS", 10, 2),
  /** Delayed messages stored before the backlog measurements. */
  backlogMessages: size("BACKLOG", 1_000_000, 50_000),
  /** Messages delivered in each backlog delivery run (empty store and full store). */
  backlogDeliveryMessages: size("BACKLOG_DELIVERY_MESSAGES", 20_000, 3_000),
  fanoutEndpoints: size("FANOUT_ENDPOINTS", 100, 100),
  fanoutRounds: size("FANOUT_ROUNDS", 5, 2),
  startRuns: size("START_RUNS", 10, 3),
  delayMessages: size("DELAY_MESSAGES", 400, 100),
  /** Messages per row of the PostgreSQL comparison (svcd on 1–3 nodes and SQLite, pg-boss, graphile-worker). */
  postgresMessages: size("POSTGRES_MESSAGES", 20_000, 2_000),
  /** Messages of each end-to-end run of the tracing rows (on and off, alternating). */
  tracingMessages: size("TRACING_MESSAGES", 20_000, 2_000),
  /** Hard stop for the whole run, in seconds: the bench must exit by itself. */
  deadlineSeconds: size("DEADLINE_SECONDS", 780, 300),
};
