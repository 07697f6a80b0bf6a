/// <reference lib="webworker" />
/**
 * A delivery worker thread: makes the HTTP requests and reports each outcome. It never touches
 * SQLite; the dispatcher on the main thread records every outcome.
 */
import { ManualClock, RealClock, type Clock } from "../core/clock.ts";
import { FlowGate } from "../flow-control/gate.ts";
import { GlobalSlots } from "../flow-control/global-slots.ts";
import { signDelivery } from "../signing/jwt.ts";
import { performRequest, type AttemptResult } from "./http-attempt.ts";
import { RequestSlots } from "./request-slots.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { DeliveryJob, FromWorker, ToWorker } from "./worker-protocol.ts";
import { packOutcomes, unpackJobs } from "./wire.ts";

declare const self: Worker;

let workerId = -1;
/** Idle keep-alive connections Bun's fetch keeps per process. */
const KEEP_ALIVE_POOL = 64;
/** A request under way this long no longer holds back others (see RequestSlots). */
const SLOW_REQUEST_MS = 50;
/**
 * Real time, until the pool says the server runs on a manual clock: from then on the worker's time
 * is exactly the server's (it moves only with the "clock" messages), so flow-control periods pass
 * when a test advances the server's clock, and not in between.
 */
let clock: Clock = new RealClock();
const now = () => clock.now();
const globalSlots = new GlobalSlots();
const gate = new FlowGate(
  {
    get kind() {
      return clock.kind;
    },
    now,
    at: (atMs, fn) => clock.at(atMs, fn),
  },
  (job: DeliveryJob, startedAt: number) => new Promise<void>((ended) => deliver(job, startedAt, ended)),
  globalSlots,
);

/** Requests under way at once (see RequestSlots); the pool's size arrives with "hello". */
let slots = new RequestSlots(KEEP_ALIVE_POOL, SLOW_REQUEST_MS);

/**
 * Carries out one job: its attempt (two for a duplicate fault), after an injected delay if any,
 * then its outcome. `ended` runs once it is over, reported or taken out while held.
 */
function deliver(job: DeliveryJob, startedAt = now(), ended?: () => void): void {
  const fault = job.fault;
  // Taken out while it waits (a cancel, a shutdown): whoever took it reports it; this attempt
  // ends here, so a flow-control lane gets its slot back.
  if (fault?.kind === "delay") return hold(job, fault.delayMs ?? 0, () => attempt(job, startedAt, ended), ended);
  attempt(job, startedAt, ended);
}

/** Waits for a request slot as a plain function in its queue, not as a promise (see RequestSlots.start). */
function attempt(job: DeliveryJob, startedAt: number, ended?: () => void, again = false): void {
  const fault = job.fault;
  slots.start(async () => {
    const t0 = performance.now();
    let result: AttemptResult;
    try {
      result = await request(job);
    } catch (error) {
      // Headers fetch refuses (checked at publish, so not expected): an outcome all the same.
      result = { error: String((error as Error)?.message ?? error) };
    }
    // As after a crash between the request and its record: the receiver gets the message again.
    if (fault?.kind === "duplicate" && !again) return attempt(job, startedAt, ended, true);
    if (fault?.kind === "timeout-after-answer" && result.status !== undefined)
      result = {
        error: `injected fault: the receiver answered ${result.status}, reported as a timeout (no answer within ${job.timeoutMs} ms)`,
      };
    const marked = fault ? { fault: { kind: fault.kind, rule: fault.rule } } : {};
    report({ ticket: job.ticket, messageId: job.messageId, startedAt, durationMs: performance.now() - t0, ...result, ...marked });
    ended?.();
  });
}

function request(job: DeliveryJob): Promise<AttemptResult> {
  const headers = new Headers(job.headers);
  headers.set(
    job.signatureHeader,
    // Receivers check iat/nbf/exp against their own wall clock, so signatures use real time
    // even when the server runs on a manual clock.
    signDelivery({ key: job.signingKey, issuer: job.issuer, url: job.url, body: job.body, nowMs: Date.now() }),
  );
  return performRequest({
    url: job.url,
    method: job.method,
    headers,
    body: job.body,
    timeoutMs: job.timeoutMs,
    maxResponseBytes: job.maxResponseBytes,
    headersOf2xx: job.headersOf2xx,
  });
}

/** Jobs an injected delay or reorder holds back, by ticket: a cancel or a shutdown takes them out unstarted. */
const held = new Map<number, { job: DeliveryJob; cancelTimer: () => void; dropped?: () => void }>();

/** Injected delays run on this thread's copy of the server's clock (a manual clock moves them). */
function hold(job: DeliveryJob, ms: number, then: () => void, dropped?: () => void): void {
  const cancelTimer = clock.at(now() + ms, () => {
    if (held.delete(job.ticket)) then();
  });
  held.set(job.ticket, { job, cancelTimer, dropped });
}

function unhold(ticket: number): DeliveryJob | undefined {
  const entry = held.get(ticket);
  if (!entry) return undefined;
  held.delete(ticket);
  entry.cancelTimer();
  entry.dropped?.();
  return entry.job;
}

/**
 * A reorder fault: the job waits outside its flow-control lane, holding no slot of it, so the
 * key's messages dispatched meanwhile overtake it; then it joins the lane like any other.
 */
function submit(job: DeliveryJob, reordered = false): void {
  const { fault } = job;
  if (fault?.kind === "reorder" && !reordered) return hold(job, fault.delayMs ?? DEFAULT_REORDER_MS, () => submit(job, true));
  if (job.flow) gate.submit({ ...job, flow: job.flow });
  else deliver(job);
}
const DEFAULT_REORDER_MS = 1_000;

/**
 * Outcomes go back in one message per turn of this thread's event loop: at a few thousand
 * attempts a second, a message each cost both threads more than the attempt's own work.
 * Every other message to the main thread first sends the outcomes before it (see post).
 */
let outcomes: DeliveryOutcome[] = [];
function report(outcome: DeliveryOutcome): void {
  if (outcomes.push(outcome) === 1) setImmediate(sendOutcomes);
}
function sendOutcomes(): void {
  if (outcomes.length === 0) return;
  const packed = packOutcomes(outcomes);
  outcomes = [];
  self.postMessage({ type: "outcomes", outcomes: packed, busyUs: busyUs() } satisfies FromWorker, [packed.bodies]);
}

/**
 * This thread's CPU time (one getrusage per batch of outcomes): the time it ran, not the time it
 * waited on the network, whose I/O Bun's HTTP client thread does. Bun's event-loop utilisation is
 * a stub that answers zeros, and timing each turn with performance.now() would miss the turns
 * that finish fetches.
 */
function busyUs(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}
function post(message: FromWorker): void {
  sendOutcomes();
  self.postMessage(message);
}

self.onmessage = (event: MessageEvent<ToWorker | { type: "hello"; workerId: number; workers: number }>) => {
  const msg = event.data;
  switch (msg.type) {
    case "hello":
      workerId = msg.workerId;
      // The keep-alive pool is the process's: the workers share it.
      slots = new RequestSlots(Math.max(8, Math.floor(KEEP_ALIVE_POOL / msg.workers)), SLOW_REQUEST_MS);
      break;
    case "deliver":
      for (const job of unpackJobs(msg.jobs)) submit(job);
      break;
    case "cancel": {
      const job = gate.cancel(msg.ticket) ?? unhold(msg.ticket);
      // The pool still counts the job as in flight until an outcome for it arrives.
      if (job) {
        report({ ticket: job.ticket, messageId: job.messageId, error: "cancelled before delivery", startedAt: now(), durationMs: 0 });
      }
      break;
    }
    case "flow-init":
      globalSlots.configure(msg.global, workerId);
      break;
    case "flow-steer":
      gate.steer(msg);
      break;
    case "flow-forget":
      gate.forget(msg.prefix);
      break;
    case "release-waiting": {
      const unstarted = [...gate.releaseWaiting(), ...[...held.keys()].flatMap((ticket) => unhold(ticket) ?? [])];
      post({ type: "released", tickets: unstarted.map((job) => job.ticket) });
      break;
    }
    case "flow-stats":
      post({ type: "flow-stats", id: msg.id, stats: gate.stats({ key: msg.key, prefix: msg.prefix }) });
      break;
    case "ping":
      post({ type: "pong", id: msg.id, workerId, busyUs: busyUs() });
      break;
    case "clock":
      if (clock instanceof ManualClock) clock.advanceTo(Math.max(msg.nowMs, clock.now()));
      else clock = new ManualClock(msg.nowMs);
      break;
    case "crash":
      // Fault drill: die with the attempts in flight, as an out-of-memory or a native fault would.
      if (msg.how === "exit") process.exit(70);
      setTimeout(() => {
        throw new Error("delivery worker crash drill");
      });
      break;
  }
};
