import type { Database } from "bun:sqlite";
import { withDeadline } from "../../core/deadline.ts";
import type { Logger } from "../../core/log.ts";
import type { BackgroundService } from "../../core/service.ts";

/** Same resolution as the delivery worker: inside the compiled binary entry points are named from `src/`. */
function checkpointerEntry(): string {
  if (import.meta.url.includes("$bunfs")) return "./engines/sqlite/checkpointer.ts";
  return new URL("./checkpointer.ts", import.meta.url).href;
}

/**
 * Every 100 ms; the WAL started over past 32 MB (of 4 KB pages), emptied past 512 MB whatever it
 * costs, and emptied past 16 MB once the writer is idle (see checkpointer.ts).
 */
const CHECKPOINTS = { intervalMs: 100, recyclePages: 8_192, truncatePages: 131_072, idlePages: 4_096 };

/** SQLite's own default, restored whenever the background checkpointer is not running. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * Moves WAL checkpoints of a file database to a worker thread (see checkpointer.ts) and turns off
 * SQLite's automatic checkpoint on the main connection. If the thread fails, automatic
 * checkpoints come back, so the WAL never grows without bound.
 */
export class BackgroundCheckpointer implements BackgroundService {
  readonly name = "WAL checkpointer";
  private worker: Worker | null = null;
  private running = false;
  private onStopped: (() => void) | null = null;

  constructor(
    private readonly db: Database,
    private readonly path: string,
    private readonly log: Logger,
    private readonly options = CHECKPOINTS,
  ) {}

  start(): void {
    const worker = new Worker(checkpointerEntry());
    this.worker = worker;
    this.running = true;
    worker.onmessage = (event: MessageEvent<{ type: string; message?: string }>) => {
      if (event.data.type === "stopped") this.onStopped?.();
      else if (event.data.type === "error") this.log.debug("WAL checkpoint retried later", { error: event.data.message });
    };
    worker.addEventListener("error", (e) => this.fallBack((e as ErrorEvent).message ?? "error"));
    worker.addEventListener("close", () => this.fallBack("exited"));
    // The thread must not keep a process alive that has nothing else to do.
    worker.unref();
    this.db.run("PRAGMA wal_autocheckpoint = 0");
    worker.postMessage({ type: "start", path: this.path, ...this.options });
  }

  /** Final checkpoint, then the thread ends; automatic checkpoints are back on for the close. */
  async stop(): Promise<void> {
    if (!this.running || !this.worker) return;
    this.running = false;
    this.worker.postMessage({ type: "stop" });
    await withDeadline(new Promise<void>((resolve) => (this.onStopped = resolve)), 2000);
    this.worker.terminate();
    this.db.run(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  }

  private fallBack(reason: string): void {
    if (!this.running) return;
    this.running = false;
    this.log.warn("background WAL checkpoints stopped; SQLite checkpoints automatically again", { reason });
    this.db.run(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  }
}
