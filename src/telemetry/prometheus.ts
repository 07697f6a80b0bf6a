import { Counter, Gauge, Registry } from "prom-client";
import type { Clock } from "../core/clock.ts";
import type { MessageEvents } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { MessageCensus } from "../messages/storage.ts";
import type { BuildInfo } from "../startup/build-info.ts";
import type { CommitCounts } from "../store/transactor.ts";
import { CountedHistogram } from "./counted-histogram.ts";

/** What the scrape reads at the moment it happens (levels, not events). */
export interface MetricSources {
  clock: Clock;
  build: BuildInfo;
  workers: number;
  census: (nowMs: number) => MessageCensus | Promise<MessageCensus>;
  /** Entries in the DLQ, per account id. */
  dlqCounts: () => Array<[string, number]> | Promise<Array<[string, number]>>;
  /** Attempts each delivery worker holds now, by worker index. */
  workerLoad: () => number[];
  /** CPU seconds each delivery worker thread has run since the start, by worker index. */
  workerBusySeconds: () => number[];
  /** Bytes of the database and of its write-ahead log. */
  storageBytes: () => { database: number; wal: number } | Promise<{ database: number; wal: number }>;
  /** The group commit's transactions and writes since the start. */
  commitCounts: () => Readonly<CommitCounts>;
  /** Faults injected by the test double's rules since the start, by kind. */
  faultsInjected?: () => Array<[string, number]>;
}

const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const LATENCY_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 7 * 24 * 3600];
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/**
 * svcd's Prometheus metrics. Message counters and delivery histograms move with the message event
 * bus, after each commit, so they count what the database holds; gauges are read at scrape time.
 * Per-account series are labelled with the account's user id.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly countRequest: (key: string, labels: () => Record<string, string>) => void;
  private readonly httpDuration: CountedHistogram;

  constructor(events: MessageEvents, sources: MetricSources) {
    const registers = [this.registry];
    // The message counters and histograms move once per message: counted in Maps, which prom-client
    // reads at each scrape (its own inc and observe hash a labels object every time).
    const counter = (name: string, help: string) => countedCounter(registers, name, help, "account");
    const published = countedCounter(registers, "svcd_messages_published_total", "Messages stored for delivery: publishes, batch elements, schedule triggers, DLQ retries, callbacks (kind)", "account", "kind");
    const delivered = counter("svcd_messages_delivered_total", "Messages delivered (a 2XX answer)");
    const retried = counter("svcd_messages_retried_total", "Failed attempts followed by a retry");
    const failed = counter("svcd_messages_failed_total", "Messages that failed for good and moved to the DLQ");
    const cancelled = counter("svcd_messages_cancelled_total", "Messages cancelled before delivery");
    const attempts = new CountedHistogram(
      "svcd_delivery_attempt_duration_seconds",
      "Duration of each delivery attempt, by what came back (2xx, 3xx, 4xx, 5xx, or no_answer: timeout, refused, reset)",
      ATTEMPT_BUCKETS,
      "result",
    );
    const latency = new CountedHistogram(
      "svcd_delivery_latency_seconds",
      "From the time a message was due (its publish, or its delay) to its delivery, retries included",
      LATENCY_BUCKETS,
      null,
    );
    this.registry.registerMetric(attempts);
    this.registry.registerMetric(latency);

    const attempted = (outcome: DeliveryOutcome) => attempts.observe(answerClass(outcome), outcome.durationMs / 1000);
    events.observe("created", (e) => published(e.message.accountId, e.message.kind));
    events.observe("delivered", (e) => {
      delivered(e.message.accountId);
      attempted(e.outcome);
      latency.observe("", Math.max(0, e.atMs - dueSince(e.message)) / 1000);
    });
    events.observe("retried", (e) => {
      retried(e.message.accountId);
      attempted(e.outcome);
    });
    events.observe("failed", (e) => {
      failed(e.message.accountId);
      attempted(e.outcome);
    });
    events.observe("cancelled", (e) => cancelled(e.message.accountId));

    // Once per request, the publish path's included: counted in Maps as the message counters.
    this.countRequest = keyedCounter(registers, "svcd_http_requests_total", "HTTP requests answered, by route pattern and status", ["method", "route", "status"]);
    this.httpDuration = new CountedHistogram("svcd_http_request_duration_seconds", "Time to answer an HTTP request, by route pattern", REQUEST_BUCKETS, ["method", "route"]);
    this.registry.registerMetric(this.httpDuration);

    new Gauge({
      name: "svcd_messages",
      help: "Stored messages now: due (waiting for a worker), delayed (due later), in_flight (an attempt under way), waiting (behind others in a queue, or held by flow control)",
      labelNames: ["state"] as const,
      registers,
      async collect() {
        const census = await sources.census(sources.clock.now());
        this.set({ state: "due" }, census.due);
        this.set({ state: "delayed" }, census.delayed);
        this.set({ state: "in_flight" }, census.inFlight);
        this.set({ state: "waiting" }, census.waiting);
      },
    });
    new Gauge({
      name: "svcd_dlq_messages",
      help: "Entries in the dead-letter queue",
      labelNames: ["account"] as const,
      registers,
      async collect() {
        const counts = await sources.dlqCounts();
        this.reset();
        for (const [account, n] of counts) this.set({ account }, n);
      },
    });
    new Gauge({ name: "svcd_delivery_workers", help: "Delivery worker threads", registers, collect() { this.set(sources.workers); } });
    new Gauge({
      name: "svcd_worker_attempts_in_flight",
      help: "Delivery attempts each worker holds now (an attempt waiting in a flow-control lane included)",
      labelNames: ["worker"] as const,
      registers,
      collect() {
        this.reset();
        sources.workerLoad().forEach((n, worker) => this.set({ worker: String(worker) }, n));
      },
    });
    new Counter({
      name: "svcd_worker_busy_seconds_total",
      help: "CPU time each delivery worker thread spent running (not waiting on the network); rate() of it is the worker's utilisation",
      labelNames: ["worker"] as const,
      registers,
      collect() {
        this.reset();
        sources.workerBusySeconds().forEach((seconds, worker) => this.inc({ worker: String(worker) }, seconds));
      },
    });
    new Counter({
      name: "svcd_faults_injected_total",
      help: "Failures injected by fault rules (POST /__svc/faults), by kind: not real failures",
      labelNames: ["kind"] as const,
      registers,
      collect() {
        this.reset();
        for (const [kind, n] of sources.faultsInjected?.() ?? []) this.inc({ kind }, n);
      },
    });
    new Gauge({
      name: "svcd_storage_bytes",
      help: "Size of the database and of its write-ahead log",
      labelNames: ["file"] as const,
      registers,
      async collect() {
        const bytes = await sources.storageBytes();
        this.set({ file: "database" }, bytes.database);
        this.set({ file: "wal" }, bytes.wal);
      },
    });
    new Counter({
      name: "svcd_storage_commits_total",
      help: "Transactions of the group commit: committed, or failed as a whole (none of its writes stored)",
      labelNames: ["result"] as const,
      registers,
      collect() {
        const counts = sources.commitCounts();
        this.reset();
        this.inc({ result: "committed" }, counts.commits);
        this.inc({ result: "failed" }, counts.failedCommits);
      },
    });
    new Counter({
      name: "svcd_storage_writes_total",
      help: "Writes stored by committed transactions (requests' and delivery's; one transaction groups those of one moment)",
      registers,
      collect() {
        this.reset();
        this.inc(sources.commitCounts().writes);
      },
    });
    new Counter({
      name: "svcd_storage_writes_refused_total",
      help: "Writes the storage refused alone, a statement of theirs failing (a constraint, a lock wait, a deadlock): not stored, the rest of their transaction was",
      registers,
      collect() {
        this.reset();
        this.inc(sources.commitCounts().refusedWrites);
      },
    });
    new Counter({
      name: "svcd_storage_writes_retried_total",
      help: "Writes that lost a lock conflict (a deadlock between two transactions, a row locked past lock_timeout) and ran again in a later transaction (PostgreSQL)",
      registers,
      collect() {
        this.reset();
        this.inc(sources.commitCounts().retriedWrites);
      },
    });
    new Gauge({ name: "svcd_build_info", help: "Version and commit of the running svcd (always 1)", labelNames: ["version", "commit"] as const, registers }).set(
      { version: sources.build.version, commit: sources.build.commit },
      1,
    );
    new Gauge({ name: "process_start_time_seconds", help: "Start time of the process, in Unix seconds", registers }).set(Math.floor(Date.now() / 1000 - process.uptime()));
  }

  /** One answered request; `route` is the pattern it matched (`unmatched` for none), never the raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const series = `${method} ${route}`;
    this.countRequest(`${series} ${status}`, () => ({ method, route, status: String(status) }));
    this.httpDuration.observeSeries(series, seconds, () => ({ method, route }));
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * A counter by one or two labels whose counts live in a Map (first seen first, as prom-client
 * lists its series); returns its increment by one.
 */
function countedCounter(registers: Registry[], name: string, help: string, ...labelNames: [string] | [string, string]) {
  const count = keyedCounter(registers, name, help, labelNames);
  const [first, second] = labelNames;
  return (a: string, b?: string): void =>
    b === undefined ? count(a, () => ({ [first]: a })) : count(`${a}\0${b}`, () => ({ [first]: a, [second!]: b }));
}

/**
 * A counter whose series the caller keys (one key per combination of label values); `labels` is
 * asked for only when a series is new. Returns its increment by one.
 */
function keyedCounter(registers: Registry[], name: string, help: string, labelNames: string[]) {
  const counts = new Map<string, { labels: Record<string, string>; n: number }>();
  new Counter({
    name,
    help,
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const c of counts.values()) this.inc(c.labels, c.n);
    },
  });
  return (key: string, labels: () => Record<string, string>): void => {
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { labels: labels(), n: 1 });
  };
}

function answerClass(outcome: DeliveryOutcome): string {
  return outcome.status === undefined ? "no_answer" : `${Math.floor(outcome.status / 100)}xx`;
}

/** A delayed message is due at its `notBefore`; any other from its creation. */
function dueSince(m: MessageRecord): number {
  return Math.max(m.createdAt, m.notBefore);
}
