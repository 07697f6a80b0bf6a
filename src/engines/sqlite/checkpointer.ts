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
 * inside it. Under a steady stream of commits that moment never comes by itself: each PASSIVE
 * checkpoint copies what was there when it began while new commits go on. The WAL file would grow
 * (to hundreds of MB at full load), every commit's frames extending it, which costs the writer
 * twice as much as writing over pages the file already has, and truncating a large WAL stalls the
 * writer for tens of ms. So once the WAL passes `recyclePages` and the last PASSIVE checkpoint
 * copied all of it, more PASSIVE passes copy what came meanwhile until little is left, then a
 * RESTART checkpoint copies the rest and waits (at most `RECYCLE_WAIT_MS`, holding the write lock:
 * the main thread waits too, a few ms) until the next write can start the WAL over from its first
 * page: the file stays at its size and is written over. A reader that keeps an old snapshot
 * (another process) makes that fail: then no RESTART is tried for a while, and a TRUNCATE
 * checkpoint bounds the WAL at `truncatePages`, as it also empties it once the writer has been
 * idle for a tick (`idlePages`).
 */
import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { keepWalFiles } from "./db.ts";

declare const self: Worker;

export interface CheckpointerStart {
  type: "start";
  path: string;
  intervalMs: number;
  /** Past this many pages the WAL is started over (RESTART) when everything in it is copied. */
  recyclePages: number;
  /** Past this many pages the WAL is emptied (TRUNCATE) whatever it costs the writer: the bound. */
  truncatePages: number;
  /** Above this many pages (in it, or of its file) the WAL is truncated as soon as the writer is idle. */
  idlePages: number;
}

let db: Database | null = null;
let walPath = "";
/** Bytes of one WAL frame: a page and its 24-byte header (the page size never changes once in WAL mode). */
let frameBytes = 0;
let timer: ReturnType<typeof setInterval> | null = null;

let lastLog = -1;
/** The WAL's length when it was last made ready to start over: until the writer does, nothing to do. */
let recycledAt = -1;
/** Ticks left before a RESTART is tried again, after one that could not finish. */
let recycleBackoff = 0;
/** How long a RESTART may hold the write lock waiting for a reader or the writer. */
const RECYCLE_WAIT_MS = 50;
const RECYCLE_BACKOFF_TICKS = 50;
/** Few enough new frames for the RESTART to copy while the writer waits. */
const RECYCLE_FRAMES_LEFT = 64;
const BUSY_TIMEOUT_MS = 1000;

type CheckpointResult = { busy: number; log: number; checkpointed: number };
const run = (mode: string) => db!.query<CheckpointResult, []>(`PRAGMA wal_checkpoint(${mode})`).get();

/**
 * Pages the WAL's file holds: once started over, the WAL may use fewer of them than its file has,
 * which stays that large until it is truncated.
 */
function walFilePages(): number {
  try {
    return Math.floor(statSync(walPath).size / frameBytes);
  } catch {
    return 0;
  }
}

function checkpoint(o: Pick<CheckpointerStart, "recyclePages" | "truncatePages" | "idlePages">) {
  if (!db) return;
  try {
    const r = run("PASSIVE");
    if (!r) return;
    // Nothing committed since the last tick: nobody waits for the write lock now.
    const idle = r.log === lastLog;
    lastLog = r.log;
    if (recycleBackoff > 0) recycleBackoff--;
    if (r.log > o.truncatePages || (idle && Math.max(r.log, walFilePages()) > o.idlePages)) run("TRUNCATE");
    else if (r.log > o.recyclePages && r.checkpointed === r.log && r.log !== recycledAt && recycleBackoff === 0)
      recycle();
  } catch (error) {
    // A busy or failed checkpoint is retried at the next tick; the main connection keeps working.
    self.postMessage({ type: "error", message: String(error) });
  }
}

/** RESTART with a short wait: the writer waits as long as it does. */
function recycle() {
  db!.run(`PRAGMA busy_timeout = ${RECYCLE_WAIT_MS}`);
  try {
    // Copied again until little is left, so the RESTART (the writer waits) has little to copy.
    for (let i = 0, from = lastLog; i < 3; i++) {
      const again = run("PASSIVE");
      if (!again || again.log - from <= RECYCLE_FRAMES_LEFT) break;
      from = again.log;
    }
    const r = run("RESTART");
    if (r?.busy) recycleBackoff = RECYCLE_BACKOFF_TICKS;
    else if (r) recycledAt = r.log;
  } finally {
    db!.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

self.onmessage = (event: MessageEvent<CheckpointerStart | { type: "stop" }>) => {
  const msg = event.data;
  if (msg.type === "start") {
    db = new Database(msg.path);
    walPath = `${msg.path}-wal`;
    frameBytes = db.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size + 24;
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    keepWalFiles(db);
    timer = setInterval(() => checkpoint(msg), msg.intervalMs);
    self.postMessage({ type: "started" });
  } else if (msg.type === "stop") {
    if (timer) clearInterval(timer);
    timer = null;
    // Everything copied and the file emptied, even when a WAL started over holds no page yet.
    try {
      if (db) run("TRUNCATE");
    } catch (error) {
      self.postMessage({ type: "error", message: String(error) });
    }
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" });
  }
};
