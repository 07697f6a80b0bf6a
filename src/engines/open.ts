import type { ServerConfig } from "../config/config.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { StartError } from "../core/start-error.ts";
import type { StorageEngine } from "./engine.ts";
import { isPostgresUrl } from "./postgres/connect.ts";
import { openPostgresEngine } from "./postgres/engine.ts";
import { openSqliteEngine } from "./sqlite/engine.ts";

/** Opens the engine the configuration names: a file path (or `--memory`) is SQLite. */
export function openStorageEngine(config: ServerConfig, log: Logger): StorageEngine {
  if (isPostgresUrl(config.dbPath)) throw new StartError("a PostgreSQL database is opened with openServer (it connects first)");
  return openSqliteEngine({ path: config.dbPath, busyTimeoutMs: config.busyTimeoutMs, log });
}

/** As openStorageEngine, and a `postgres://` URL opens PostgreSQL (connecting and migrating first). */
export async function openAnyStorageEngine(config: ServerConfig, log: Logger, clock: Clock): Promise<StorageEngine> {
  if (!isPostgresUrl(config.dbPath)) return openStorageEngine(config, log);
  return openPostgresEngine({
    url: config.dbPath,
    log,
    poolSize: config.dbPoolSize,
    ticksInFlight: config.dbTicks,
    heartbeatMs: Math.max(100, Math.floor(config.nodeTimeoutMs / 5)),
    nodeTimeoutMs: config.nodeTimeoutMs,
    now: () => clock.now(),
  });
}
