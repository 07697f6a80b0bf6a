import { ConfigError } from "../config/config.ts";
import { StartError } from "../core/start-error.ts";
import { isStorageUnavailable } from "../store/errors.ts";

/** The one line printed when the start fails (after `svcd: `). */
export function startFailureLine(error: unknown): string {
  if (error instanceof StartError || error instanceof ConfigError) return error.message;
  const message = String((error as Error)?.message ?? error).split("\n")[0];
  if (isStorageUnavailable(error))
    return `the database cannot be written while starting (${message}); free space or release the lock, then start again`;
  return `cannot start: ${message} (run with --log-level debug to see where)`;
}
