import type { AccountRegistry } from "../accounts/accounts.ts";
import type { ServerConfig } from "../config/config.ts";
import type { Clock } from "../core/clock.ts";
import type { Dialect } from "../core/dialect.ts";
import type { Logger } from "../core/log.ts";
import type { Tracing } from "../model/trace.ts";
import type { Transactor } from "../store/transactor.ts";

/** What every domain gets: the config, one clock, one logger, the accounts and the group commit (never a database handle: the stores come from the storage engine). */
export interface AppContext {
  readonly config: ServerConfig;
  readonly clock: Clock;
  readonly log: Logger;
  readonly dialect: Dialect;
  readonly accounts: AccountRegistry;
  readonly commit: Transactor;
  /** OpenTelemetry tracing; absent when off (every caller checks first: an untraced message costs a branch). */
  readonly tracing?: Tracing;
}
