import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { BackgroundService } from "../core/service.ts";
import { withDeadline } from "../core/deadline.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { FlowLaneStats } from "../flow-control/gate.ts";
import type { DeliveryJob, FromWorker, ToWorker } from "./worker-protocol.ts";
import { packJobs, unpackOutcomes } from "./wire.ts";
import { stableHash } from "../util/stable-hash.ts";

interface Slot {
  id: number;
  worker: Worker;
  inFlight: Map<number, DeliveryJob>;
  /** Jobs submitted in this turn of the event loop, posted together at its end (see send). */
  pending: DeliveryJob[];
  alive: boolean;
  /**
   * CPU time of this worker index, in microseconds: what the threads it replaced used, plus what
   * this thread last reported, so the counter never goes back when a worker is replaced.
   */
  busyBeforeUs: number;
  busyUs: number;
}

/**
 * Inside the compiled binary every module lives in Bun's embedded file system and the worker is
 * an extra entry point named relative to `src/`; under `bun` it sits next to this file.
 */
function workerEntry(): string {
  return import.meta.url.includes("$bunfs") ? "./delivery/worker.ts" : new URL("./worker.ts", import.meta.url).href;
}

export interface WorkerPoolOptions {
  size: number;
  /** Where each attempt's outcome goes (the outcome recorder). */
  onOutcome: (outcome: DeliveryOutcome) => void;
  log: Logger;
  /** On a manual clock every worker is told the server's time, from its start and at every jump. */
  clock: Pick<Clock, "kind" | "now" | "onAdvance">;
  /**
   * What every new worker is told before its first job, a replacement for a crashed one too: the
   * state flow control keeps outside the workers (paused and pinned keys, rate windows).
   */
  greeting?: () => ToWorker[];
}

/**
 * The delivery workers. Each job goes to the worker of its flow-control key (so that key's bucket
 * lives in one place), else to the least busy one. A worker that dies is replaced and the jobs it
 * held come back as failed attempts, to be retried.
 */
export class WorkerPool implements BackgroundService {
  readonly name = "delivery workers";
  private slots: Slot[] = [];
  private pings = new Map<number, (workerId: number) => void>();
  private flowStatsRequests = new Map<number, (stats: FlowLaneStats[]) => void>();
  private nextPing = 1;
  private closed = false;
  private drained: (() => void) | null = null;
  private readonly log: Logger;
  private readonly clock: WorkerPoolOptions["clock"];

  constructor(private readonly options: WorkerPoolOptions) {
    this.log = options.log;
    this.clock = options.clock;
    options.clock.onAdvance((nowMs) => this.broadcast({ type: "clock", nowMs }));
  }

  /** Starts the worker threads; resolves once every one answers. */
  async start(): Promise<void> {
    for (let i = 0; i < this.options.size; i++) this.slots.push(this.spawn(i));
    await this.ping();
  }

  /**
   * Jobs that only wait in a flow-control lane are given back unstarted (their messages stay in
   * flight in the store and are delivered after the next start, without using a retry); attempts
   * under way may finish until the deadline; then the threads end.
   */
  async stop(deadline: number): Promise<void> {
    this.releaseWaiting();
    if (this.inFlight > 0) {
      const drained = new Promise<void>((resolve) => (this.drained = resolve));
      await withDeadline(drained, deadline - Date.now());
    }
    this.close();
  }

  /** Attempts each worker holds now, by worker index. */
  get load(): number[] {
    return this.slots.map((slot) => slot.inFlight.size);
  }

  /** CPU seconds each worker index has run, as last reported (with outcomes and pongs). */
  get busySeconds(): number[] {
    return this.slots.map((slot) => (slot.busyBeforeUs + slot.busyUs) / 1e6);
  }

  get inFlight(): number {
    let n = 0;
    for (const slot of this.slots) n += slot.inFlight.size;
    return n;
  }

  submit(job: DeliveryJob): void {
    const slot = job.flow
      ? this.slots[stableHash(job.flow.key) % this.slots.length]!
      : this.slots.reduce((a, b) => (b.inFlight.size < a.inFlight.size ? b : a));
    slot.inFlight.set(job.ticket, job);
    this.send(slot, { type: "job", job });
  }

  broadcast(message: ToWorker): void {
    for (const slot of this.slots) this.send(slot, message);
  }

  /** Round trip to every worker; resolves with their ids once all answered. */
  async ping(): Promise<number[]> {
    return Promise.all(
      this.slots.map(
        (slot) =>
          new Promise<number>((resolve) => {
            const id = this.nextPing++;
            this.pings.set(id, resolve);
            this.send(slot, { type: "ping", id });
          }),
      ),
    );
  }

  /**
   * Fault drill for tests and the control API only: makes worker `index` die the way a real crash
   * would (`exit`: process.exit inside the thread; `throw`: an uncaught exception), with whatever
   * it holds in flight. The pool then replaces it and those attempts come back as failed.
   */
  crashWorker(index: number, how: "exit" | "throw" = "exit"): void {
    const slot = this.slots[index % this.slots.length]!;
    this.send(slot, { type: "crash", how });
  }

  /**
   * Live counters of flow-control lanes: of one lane (asking only the worker that owns it) or of
   * every lane whose key starts with `prefix`. A worker that does not answer within 2 s counts as
   * knowing no lanes (it may just have died).
   */
  async flowStats(filter: { key: string } | { prefix: string }): Promise<FlowLaneStats[]> {
    const slots = "key" in filter ? [this.slots[stableHash(filter.key) % this.slots.length]!] : this.slots;
    const answers = await Promise.all(
      slots.map(
        (slot) =>
          new Promise<FlowLaneStats[]>((resolve) => {
            const id = this.nextPing++;
            const timer = setTimeout(() => {
              this.flowStatsRequests.delete(id);
              resolve([]);
            }, 2000);
            this.flowStatsRequests.set(id, (stats) => {
              clearTimeout(timer);
              resolve(stats);
            });
            this.send(slot, { type: "flow-stats", id, ...filter });
          }),
      ),
    );
    return answers.flat();
  }

  private releaseWaiting(): void {
    this.broadcast({ type: "release-waiting" });
  }

  /** A cancelled attempt that still waits in its worker's flow-control lane is dropped there. */
  cancel(ticket: number): void {
    const slot = this.slots.find((s) => s.inFlight.has(ticket));
    if (slot) this.send(slot, { type: "cancel", ticket });
  }

  /** Ends the threads at once (what they hold stays ACTIVE in the store). */
  close(): void {
    this.closed = true;
    for (const slot of this.slots) {
      slot.alive = false;
      slot.worker.terminate();
    }
  }

  /** The stop under way waits for the last attempt to end. */
  private checkDrained(): void {
    if (this.drained && this.inFlight === 0) this.drained();
  }

  /**
   * Jobs go to a worker in one message per turn of the event loop (a claim pass hands over
   * hundreds at once): a message per job cost the main thread more than recording its outcome.
   * Anything else sent to the worker first posts the jobs before it, so it arrives in order (a
   * cancel after its job).
   */
  private send(slot: Slot, message: ToWorker | { type: "job"; job: DeliveryJob }) {
    if (message.type === "job") {
      if (slot.pending.push(message.job) === 1) queueMicrotask(() => this.postJobs(slot));
      return;
    }
    this.postJobs(slot);
    slot.worker.postMessage(message);
  }

  private postJobs(slot: Slot): void {
    if (slot.pending.length === 0 || !slot.alive) return;
    const jobs = packJobs(slot.pending);
    slot.pending = [];
    slot.worker.postMessage({ type: "deliver", jobs } satisfies ToWorker, [jobs.bodies]);
  }

  private spawn(id: number, busyBeforeUs = 0): Slot {
    const worker = new Worker(workerEntry());
    const slot: Slot = { id, worker, inFlight: new Map(), pending: [], alive: true, busyBeforeUs, busyUs: 0 };
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const msg = event.data;
      if (msg.type === "outcomes" || msg.type === "pong") slot.busyUs = msg.busyUs;
      if (msg.type === "outcomes") {
        for (const outcome of unpackOutcomes(msg.outcomes)) if (slot.inFlight.delete(outcome.ticket)) this.options.onOutcome(outcome);
        this.checkDrained();
      } else if (msg.type === "released") {
        for (const ticket of msg.tickets) slot.inFlight.delete(ticket);
        this.checkDrained();
      } else if (msg.type === "flow-stats") {
        this.flowStatsRequests.get(msg.id)?.(msg.stats);
        this.flowStatsRequests.delete(msg.id);
      } else if (msg.type === "pong") {
        this.pings.get(msg.id)?.(msg.workerId);
        this.pings.delete(msg.id);
      }
    };
    const died = (reason: string) => {
      if (!slot.alive || this.closed) return;
      slot.alive = false;
      // An error event does not always end the thread: make sure it is gone, so its attempts
      // are not finished twice (here as failures and there as late answers).
      worker.terminate();
      this.log.error("delivery worker died; replacing it", { worker: id, reason, inFlight: slot.inFlight.size });
      const replacement = this.spawn(id, slot.busyBeforeUs + slot.busyUs);
      this.slots[this.slots.indexOf(slot)] = replacement;
      for (const job of slot.inFlight.values()) {
        this.options.onOutcome({
          ticket: job.ticket,
          messageId: job.messageId,
          error: "delivery worker crashed during the attempt",
          startedAt: this.clock.now(),
          durationMs: 0,
        });
      }
      slot.inFlight.clear();
      slot.pending = [];
      this.checkDrained();
    };
    worker.addEventListener("error", (e) => died((e as ErrorEvent).message ?? "error"));
    worker.addEventListener("close", () => died("exited"));
    worker.postMessage({ type: "hello", workerId: id, workers: this.options.size });
    if (this.clock.kind === "manual") worker.postMessage({ type: "clock", nowMs: this.clock.now() } satisfies ToWorker);
    for (const message of this.options.greeting?.() ?? []) worker.postMessage(message);
    return slot;
  }
}
