import type { BackgroundService } from "../core/service.ts";
import type { FastRoute } from "../http/fast-route.ts";
import type { RoutePlugin } from "../http/plugin.ts";
import type { WriteTx } from "../store/transactor.ts";

/**
 * Deletes everything one domain keeps for an account (never its credentials). It runs inside the
 * reset's single write (`tx`); it may also drop in-memory state (timers, counters, in-flight
 * attempts) of that account.
 */
export type AccountReset = (tx: WriteTx, accountId: string) => Promise<void>;

export interface ResetPart {
  name: string;
  reset: AccountReset;
}

export interface DomainRoutes {
  /** The messaging API (main port). */
  messaging?: RoutePlugin[];
  /** The management API (its own port when configured). */
  management?: RoutePlugin[];
  /** The control plane (/__svc/*), which both ports serve. */
  control?: RoutePlugin[];
  /** The hottest requests, routed by Bun straight to their handler (main port). */
  fast?: FastRoute[];
}

/**
 * What one domain adds to the server: the composition root collects these from its list of
 * modules, in list order, into the HTTP APIs, the test double's reset, the background services
 * and what this node follows of the changes other nodes sharing the storage make.
 */
export interface DomainModule {
  routes?: DomainRoutes;
  /** Its part of `POST /__svc/reset`. */
  resets?: ResetPart[];
  /** Background work, started after the message engine's in list order and stopped in reverse. */
  services?: BackgroundService[];
  /** A table another process sharing the storage changed: what this node does about it. */
  watches?: Array<[table: string, changed: () => void | Promise<void>]>;
}
