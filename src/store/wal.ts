import type { Database } from "bun:sqlite";
import type { Logger } from "../core/log.ts";

/** Same resolution as the delivery worker: inside the compiled binary entry points are named from `src/`. */
function checkpointerEntry(): string {
  return import.meta.url.includes("$bunfs") ? "./store/checkpointer.ts" : new URL("./checkpointer.ts", import.meta.url).href;
}

/** SQLite's own default, restored whenever the background checkpointer is not running. */
const AUTO_CHECKPOINT_PAGES = 1000;

export interface BackgroundCheckpointer {
  /** Final checkpoint, then the thread ends; automatic checkpoints are back on for the close. */
  stop(): Promise<void>;
}

/**
 * Moves WAL checkpoints of a file database to a worker thread (see checkpointer.ts) and turns off
 * SQLite's automatic checkpoint on the main connection. If the thread fails, automatic
 * checkpoints come back, so the WAL never grows without bound.
 */
export function startBackgroundCheckpointer(
  db: Database,
  path: string,
  log: Logger,
  { intervalMs = 100, restartPages = 131_072, idlePages = 4_096 } = {},
): BackgroundCheckpointer {
  const worker = new Worker(checkpointerEntry());
  let running = true;
  const fallBack = (reason: string) => {
    if (!running) return;
    running = false;
    log.warn("background WAL checkpoints stopped; SQLite checkpoints automatically again", { reason });
    db.run(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
  let onStopped: (() => void) | null = null;
  worker.onmessage = (event: MessageEvent<{ type: string; message?: string }>) => {
    if (event.data.type === "stopped") onStopped?.();
    else if (event.data.type === "error") log.debug("WAL checkpoint retried later", { error: event.data.message });
  };
  worker.addEventListener("error", (e) => fallBack((e as ErrorEvent).message ?? "error"));
  worker.addEventListener("close", () => fallBack("exited"));
  // The thread must not keep a process alive that has nothing else to do.
  worker.unref();
  db.run("PRAGMA wal_autocheckpoint = 0");
  // When the writer starts the WAL over, a file grown by a burst shrinks back to this size.
  db.run(`PRAGMA journal_size_limit = ${16 * 1024 * 1024}`);
  worker.postMessage({ type: "start", path, intervalMs, restartPages, idlePages });

  return {
    async stop() {
      if (!running) return;
      running = false;
      worker.postMessage({ type: "stop" });
      await Promise.race([new Promise<void>((resolve) => (onStopped = resolve)), Bun.sleep(2000)]);
      worker.terminate();
      db.run(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    },
  };
}
