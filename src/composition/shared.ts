import { AccountRegistry } from "../accounts/accounts.ts";
import { RequestLimits } from "../accounts/rate-limits.ts";
import { loadConfigFile, type ConfigFile } from "../config/config-file.ts";
import type { ServerConfig } from "../config/config.ts";
import type { AppContext } from "../context/app-context.ts";
import { ManualClock, RealClock, type Clock } from "../core/clock.ts";
import { DIALECTS } from "../core/dialect.ts";
import { createLogger, type Logger } from "../core/log.ts";
import { WakeSignal } from "../core/wake.ts";
import type { StorageEngine } from "../engines/engine.ts";
import { openStorageEngine } from "../engines/open.ts";
import { createFaultDomain } from "../faults/domain.ts";
import { MetricsEngine } from "../metrics/engine.ts";
import { buildInfo } from "../startup/build-info.ts";
import { MessageTracing } from "../tracing/message-tracing.ts";

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
  /** Each account's request rates: the accounts admit requests by them, message events count into them. */
  requestLimits: RequestLimits;
  /**
   * Fault injection: rules a test sets; the dispatcher asks them for each attempt, the HTTP app for
   * each request, the metrics count what they injected.
   */
  faults: Awaited<ReturnType<typeof createFaultDomain>>;
  /** OpenTelemetry tracing when the configuration turns it on (the `OTEL_*` variables). */
  tracing?: MessageTracing;
}

/**
 * One logger, one clock, one database (with every domain's migrations) written through one group
 * commit, the accounts and their request limits, the usage-metrics engine, the dispatcher's wake
 * signal and the fault rules.
 */
export async function openShared(config: ServerConfig, options: SharedOptions): Promise<Shared> {
  const { log, clock } = loggerAndClock(config, options);
  const configFile = options.configFile ?? (config.configFile ? loadConfigFile(config.configFile) : null);
  const dialect = DIALECTS[config.dialect];
  const storage = options.storage ?? openStorageEngine(config, log);
  const hostedTokens = dialect.name === "upstash";
  const requestLimits = new RequestLimits(clock, storage.stores.requestCounts);
  const accounts = await AccountRegistry.open(
    storage.stores.accounts,
    storage.commit,
    AccountRegistry.entriesFrom(configFile, config.defaultAccount, hostedTokens),
    configFile?.plans,
    hostedTokens,
    requestLimits,
  );
  const tracing = config.tracing ? new MessageTracing(config.tracing, clock, log, buildInfo().version) : undefined;
  const ctx: AppContext = { config, clock, log, dialect, accounts, commit: storage.commit, tracing };
  const usage = new MetricsEngine(storage.stores.rollups, clock, { log });
  return { ctx, storage, usage, wake: new WakeSignal(), requestLimits, faults: await createFaultDomain(ctx, storage.stores.faults), tracing };
}
