import type { Logger } from "../core/log.ts";
import { isStorageUnavailable } from "./errors.ts";

/** Wall-clock pause between tries (the same pause the dispatcher takes after a storage error). */
const RETRY_MS = 500;

export interface StorageRetry {
  /** Why the work still waits (the last storage error), or null once it is done. */
  readonly waitingFor: string | null;
  /** Stops trying (shutdown). */
  cancel(): void;
}

/**
 * Runs `work` now and, while it fails because storage is unavailable (disk full, lock held, I/O
 * error), again every 500 ms until it succeeds; `work` must be safe to run again after a failed
 * try (each try is one transaction). Any other error is thrown from the first try (a bug or a bad
 * configuration must stop the start); after that it is logged and tried again.
 */
export function runUntilStored(what: string, work: () => void, log: Logger, retryMs = RETRY_MS): StorageRetry {
  let waitingFor: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let since = 0;
  const attempt = (first: boolean) => {
    timer = null;
    try {
      work();
    } catch (error) {
      if (first && !isStorageUnavailable(error)) throw error;
      const reason = String((error as Error)?.message ?? error);
      if (waitingFor === null) {
        since = Date.now();
        log.warn(`${what} waits for storage; trying again every ${retryMs} ms`, { error: reason });
      } else if (!isStorageUnavailable(error)) log.error(`${what} failed; trying again in ${retryMs} ms`, { error: reason });
      waitingFor = reason;
      timer = setTimeout(() => attempt(false), retryMs);
      return;
    }
    if (waitingFor !== null) log.info(`${what} done: storage answers again`, { waitedMs: Date.now() - since });
    waitingFor = null;
  };
  attempt(true);
  return {
    get waitingFor() {
      return waitingFor;
    },
    cancel() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
