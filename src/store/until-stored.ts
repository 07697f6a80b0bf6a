import type { Logger } from "../core/log.ts";
import { refusedByStorage } from "./errors.ts";

/** Wall-clock pause between tries (the same pause the dispatcher takes after a storage error). */
const RETRY_MS = 500;

export interface StorageRetry {
  /** Why the work still waits (the last storage error), or null once it is done. */
  readonly waitingFor: string | null;
  /** Stops trying (shutdown). */
  cancel(): void;
}

/**
 * Runs `work` now and, while it fails because storage refused it (disk full, lock held, I/O
 * error: its write was not stored), again every 500 ms until it succeeds; `work` must be safe to
 * run again after a failed try (each try is one write). Resolves once the first try is over. Any
 * other error rejects it (a bug or a bad configuration must stop the start); after that it is
 * logged and tried again.
 */
export async function runUntilStored(
  what: string,
  work: () => Promise<void>,
  log: Logger,
  retryMs = RETRY_MS,
): Promise<StorageRetry> {
  let waitingFor: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let cancelled = false;
  let since = 0;
  const attempt = async (first: boolean): Promise<void> => {
    timer = null;
    try {
      await work();
    } catch (error) {
      if (first && !refusedByStorage(error)) throw error;
      const reason = String((error as Error)?.message ?? error);
      if (waitingFor === null) {
        since = Date.now();
        log.warn(`${what} waits for storage; trying again every ${retryMs} ms`, { error: reason });
      } else if (!refusedByStorage(error)) {
        log.error(`${what} failed; trying again in ${retryMs} ms`, { error: reason });
      }
      waitingFor = reason;
      if (!cancelled) timer = setTimeout(() => void attempt(false), retryMs);
      return;
    }
    if (waitingFor !== null) log.info(`${what} done: storage answers again`, { waitedMs: Date.now() - since });
    waitingFor = null;
  };
  await attempt(true);
  return {
    get waitingFor() {
      return waitingFor;
    },
    cancel() {
      cancelled = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
