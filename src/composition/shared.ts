import { AccountRegistry } from "../accounts/accounts.ts";
import { loadConfigFile, type ConfigFile } from "../config/config-file.ts";
import type { ServerConfig } from "../config/config.ts";
import type { AppContext } from "../context/app-context.ts";
import { ManualClock, RealClock, type Clock } from "../core/clock.ts";
import { DIALECTS } from "../core/dialect.ts";
import { createLogger, type Logger } from "../core/log.ts";
import { WakeSignal } from "../core/wake.ts";
import type { StorageEngine } from "../engines/engine.ts";
import { openStorageEngine } from "../engines/open.ts";
import { MetricsEngine } from "../metrics/engine.ts";

/** What a caller may hand the server instead of what the configuration says (tests, openServer). */
export interface SharedOptions {
  /** A parsed config file, instead of reading `config.configFile` (tests). */
  configFile?: ConfigFile;
  logger?: Logger;
  clock?: Clock;
  /** An engine opened already (openServer opens PostgreSQL this way); else SQLite is opened here. */
  storage?: StorageEngine;
}

/** The logger and clock the configuration asks for, unless given. */
export function loggerAndClock(config: ServerConfig, options: SharedOptions): { log: Logger; clock: Clock } {
  return {
    log: options.logger ?? createLogger({ level: config.logLevel, format: config.logFormat }),
    clock: options.clock ?? (config.clock === "manual" ? new ManualClock(Date.now()) : new RealClock()),
  };
}

/** What every part of the server shares. */
export interface Shared {
  ctx: AppContext;
  storage: StorageEngine;
  /** The usage-metrics engine: the messaging engine and the management API count into it. */
  usage: MetricsEngine;
  /** Producers tell the dispatcher that messages may be due through it. */
  wake: WakeSignal;
}

/**
 * One logger, one clock, one database (with every domain's migrations) written through one group
 * commit, the accounts, the usage-metrics engine and the dispatcher's wake signal.
 */
export function openShared(config: ServerConfig, options: SharedOptions): Shared {
  const { log, clock } = loggerAndClock(config, options);
  const configFile = options.configFile ?? (config.configFile ? loadConfigFile(config.configFile) : null);
  const dialect = DIALECTS[config.dialect];
  const storage = options.storage ?? openStorageEngine(config, log);
  const hostedTokens = dialect.name === "upstash";
  const accounts = new AccountRegistry(
    storage.stores.accounts,
    AccountRegistry.entriesFrom(configFile, config.defaultAccount, hostedTokens),
    configFile?.plans,
    hostedTokens,
  );
  const ctx: AppContext = { config, clock, log, dialect, accounts, commit: storage.commit };
  return { ctx, storage, usage: new MetricsEngine(storage.stores.rollups, clock, { log }), wake: new WakeSignal() };
}
