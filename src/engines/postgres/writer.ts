import type { StorageFailure } from "../../store/errors.ts";
import { receiveMessageOnPort } from "node:worker_threads";
import type { PendingRows, Statement, StatementRunner, WriterReply, WriterRequest } from "./writer-protocol.ts";

/** Bun's MessagePort is the one node:worker_threads takes (one class at run time; the type definitions differ). */
const receiveNow = receiveMessageOnPort as (port: MessagePort) => { message: unknown } | undefined;

function writerEntry(): string {
  return import.meta.url.includes("$bunfs") ? "./engines/postgres/writer-thread.ts" : new URL("./writer-thread.ts", import.meta.url).href;
}

/** A statement of the tick failed, or the connection did: the tick's transaction is lost. */
export class WriterError extends Error implements StorageFailure {
  readonly storageUnavailable = true;
  constructor(
    message: string,
    /** SQLSTATE when PostgreSQL answered with an error. */
    readonly code: string | undefined,
    /** Index of the failed statement in its batch; -1 when the commit (or the connection) failed. */
    readonly failedAt: number,
  ) {
    super(message);
  }
}

export interface WriterOptions {
  url: string;
  /** How long a write may wait for a row lock (it blocks the main thread meanwhile). */
  lockTimeoutMs: number;
  /** How long the main thread waits for an answer before it gives the tick up. */
  answerTimeoutMs: number;
}

/**
 * The connection writes run on, held by a thread of its own. `runNow` blocks the calling thread
 * until PostgreSQL answered: that is what lets a write, which runs synchronously inside the
 * group commit, read its rows with plain SQL inside the tick's transaction. `run` does not block
 * (the commit, whose wait for the disk must not stall the server).
 */
export class Writer implements StatementRunner {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (rows: Record<string, unknown>[]) => void; reject: (e: Error) => void }>();
  /** A synchronous call is under way: its answer is read with receiveMessageOnPort, not by the listener. */
  private inSyncCall = false;
  private closed = false;

  private constructor(
    private readonly o: WriterOptions,
    worker: Worker,
    port: MessagePort,
  ) {
    this.worker = worker;
    this.port = port;
    this.port.onmessage = (event: MessageEvent<WriterReply>) => this.settle(event.data);
  }

  /** Starts the thread and connects it; rejects with PostgreSQL's answer when it cannot. */
  static async open(o: WriterOptions): Promise<Writer> {
    const worker = new Worker(writerEntry());
    const channel = new MessageChannel();
    const writer = new Writer(o, worker, channel.port1);
    const ready = new Promise<void>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<{ ready: boolean; message?: string }>) =>
        event.data.ready ? resolve() : reject(new Error(event.data.message ?? "the writer thread could not connect"));
      worker.onerror = (event) => reject(new Error(event.message || "the writer thread failed"));
    });
    worker.postMessage({ url: o.url, port: channel.port2, flag: writer.flag.buffer, lockTimeoutMs: o.lockTimeoutMs }, [channel.port2]);
    try {
      await ready;
    } catch (error) {
      worker.terminate();
      throw error;
    }
    return writer;
  }

  /** Runs the statements and waits for their answer, blocking this thread; returns the last one's rows. */
  runNow(statements: Statement[], end?: "commit" | "rollback"): Record<string, unknown>[] {
    if (this.closed) throw new WriterError("the writer is closed", undefined, -1);
    const id = this.nextId++;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ id, sync: true, statements, end } satisfies WriterRequest);
    return this.waitFor(id);
  }

  /**
   * Sends the statements without waiting: their answer comes while this thread does other work
   * (the writer thread runs them after what was sent before), and `rows()` waits only for what is
   * left of the round trip.
   */
  send(statements: Statement[]): PendingRows {
    if (this.closed) throw new WriterError("the writer is closed", undefined, -1);
    const id = this.nextId++;
    let answer: { rows: Record<string, unknown>[] } | { error: Error } | null = null;
    this.waiting.set(id, { resolve: (rows) => (answer = { rows }), reject: (error) => (answer = { error }) });
    this.port.postMessage({ id, sync: false, statements } satisfies WriterRequest);
    return {
      rows: () => {
        if (!answer) {
          try {
            // Its answer comes before that of a request sent after it, which wakes this thread.
            this.runNow([]);
            if (!answer) throw new WriterError("the writer answered out of order", undefined, -1);
          } catch (error) {
            answer = { error: error as Error };
          }
        }
        if ("error" in answer) throw answer.error;
        return answer.rows;
      },
    };
  }

  /** Blocks until the answer of request `id` (settling the answers of others that come first). */
  private waitFor(id: number): Record<string, unknown>[] {
    this.inSyncCall = true;
    try {
      const deadline = performance.now() + this.o.answerTimeoutMs;
      for (;;) {
        for (let received = this.receive(); received; received = this.receive()) {
          if (received.id === id) return rowsOf(received);
          // Not this call's: an answer of a call given up earlier, or of a call that does not block.
          this.settle(received, true);
        }
        const left = deadline - performance.now();
        if (left <= 0) throw new WriterError(`PostgreSQL did not answer within ${this.o.answerTimeoutMs} ms`, undefined, -1);
        // Short waits: a wake-up that raced the reset of the flag costs at most one of them.
        Atomics.wait(this.flag, 0, 0, Math.min(left, 50));
        Atomics.store(this.flag, 0, 0);
      }
    } finally {
      this.inSyncCall = false;
    }
  }

  /** Runs the statements without blocking; resolves with the last one's rows. */
  run(statements: Statement[], end?: "commit" | "rollback"): Promise<Record<string, unknown>[]> {
    if (this.closed) return Promise.reject(new WriterError("the writer is closed", undefined, -1));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.port.postMessage({ id, sync: false, statements, end } satisfies WriterRequest);
    });
  }

  close(): void {
    this.closed = true;
    this.port.close();
    this.worker.terminate();
    for (const w of this.waiting.values()) w.reject(new WriterError("the writer is closed", undefined, -1));
    this.waiting.clear();
  }

  private receive(): WriterReply | undefined {
    return receiveNow(this.port)?.message as WriterReply | undefined;
  }

  private settle(reply: WriterReply, duringSyncCall = false): void {
    if (this.inSyncCall && !duringSyncCall) return;
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    try {
      waiter.resolve(rowsOf(reply));
    } catch (error) {
      waiter.reject(error as Error);
    }
  }
}

function rowsOf(reply: WriterReply): Record<string, unknown>[] {
  if (!reply.ok) throw new WriterError(reply.message, reply.code, reply.failedAt);
  return reply.rows;
}
