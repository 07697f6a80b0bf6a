/// <reference lib="webworker" />
/**
 * WAL checkpoints off the main thread. A checkpoint copies committed WAL pages into the database
 * file and fsyncs both files; inside SQLite's automatic checkpoint that happens in the middle of a
 * publish commit, stalls every request of that tick, and took about a quarter of the main
 * thread under publish load. This worker thread has its own connection and runs a PASSIVE
 * checkpoint every few milliseconds: it never blocks a writer, and commits stay as durable as
 * before (synchronous=NORMAL: a commit survives a crash of the process either way).
 *
 * The main connection's next write starts the WAL over once everything is copied and no reader is
 * inside it, so checkpoints are spaced out to leave it that moment. Under a steady stream of
 * commits that moment rarely comes and the WAL grows: a TRUNCATE checkpoint (it holds the write
 * lock while it copies the rest and syncs, so the main thread waits) empties it once the writer
 * has been idle for a tick, or, as a bound, once it passes `restartPages` (a stall of tens of ms,
 * rare with a large bound: truncating at 64 MB stalled every 2 s at 1,000 messages/s).
 */
import { Database } from "bun:sqlite";
import { keepWalFiles } from "./db.ts";

declare const self: Worker;

export interface CheckpointerStart {
  type: "start";
  path: string;
  intervalMs: number;
  restartPages: number;
  /** Above this many pages the WAL is truncated as soon as the writer is idle. */
  idlePages: number;
}

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

let lastLog = -1;

function checkpoint(restartPages: number, idlePages: number) {
  if (!db) return;
  try {
    const r = db.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (!r) return;
    // Nothing committed since the last tick: nobody waits for the write lock now.
    const idle = r.log === lastLog;
    if (r.log > restartPages || (idle && r.log > idlePages)) db.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
    lastLog = r.log;
  } catch (error) {
    // A busy or failed checkpoint is retried at the next tick; the main connection keeps working.
    self.postMessage({ type: "error", message: String(error) });
  }
}

self.onmessage = (event: MessageEvent<CheckpointerStart | { type: "stop" }>) => {
  const msg = event.data;
  if (msg.type === "start") {
    db = new Database(msg.path);
    db.run("PRAGMA busy_timeout = 1000");
    keepWalFiles(db);
    timer = setInterval(() => checkpoint(msg.restartPages, msg.idlePages), msg.intervalMs);
    self.postMessage({ type: "started" });
  } else if (msg.type === "stop") {
    if (timer) clearInterval(timer);
    timer = null;
    checkpoint(0, 0);
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" });
  }
};
