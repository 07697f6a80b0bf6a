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
 * inside it, so checkpoints are spaced out to leave it that moment. When the WAL still grows past
 * `restartPages`, one TRUNCATE checkpoint waits for the writer and empties the file.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

export interface CheckpointerStart {
  type: "start";
  path: string;
  intervalMs: number;
  restartPages: number;
}

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | null = null;

function checkpoint(restartPages: number) {
  if (!db) return;
  try {
    const r = db.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)").get();
    // Past the bound: wait for the writer once and cut the file back to zero.
    if (r && r.log > restartPages) db.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
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
    timer = setInterval(() => checkpoint(msg.restartPages), msg.intervalMs);
    self.postMessage({ type: "started" });
  } else if (msg.type === "stop") {
    if (timer) clearInterval(timer);
    timer = null;
    checkpoint(0);
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" });
  }
};
