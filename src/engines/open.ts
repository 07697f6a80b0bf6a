import type { ServerConfig } from "../config/config.ts";
import type { Logger } from "../core/log.ts";
import type { StorageEngine } from "./engine.ts";
import { openSqliteEngine } from "./sqlite.ts";

/** Opens the engine the configuration names: a file path (or `--memory`) is SQLite. */
export function openStorageEngine(config: ServerConfig, log: Logger): StorageEngine {
  return openSqliteEngine({ path: config.dbPath, busyTimeoutMs: config.busyTimeoutMs, log });
}
