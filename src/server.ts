import type { ServerConfig } from "./config/config.ts";
import { FixtureChecker } from "./config/fixture-check.ts";
import type { AppContext } from "./context/app-context.ts";
import type { DomainModule, ResetPart } from "./context/domain-module.ts";
import { ResetRegistry } from "./control/reset.ts";
import { ServiceGroup } from "./core/service.ts";
import type { Dispatcher } from "./delivery/dispatcher.ts";
import type { WorkerPool } from "./delivery/pool.ts";
import type { DeliveryProbe } from "./delivery/probe.ts";
import type { StorageEngine } from "./engines/engine.ts";
import { openAnyStorageEngine } from "./engines/open.ts";
import type { MessageEvents, MessageListener } from "./model/events.ts";
import { applyQueueFixtures } from "./queues/fixtures.ts";
import { applyScheduleFixtures } from "./schedules/fixtures.ts";
import { applyUrlGroupFixtures } from "./url-groups/fixtures.ts";
import { createDomainServices, type ComposedModule, type Parts } from "./composition/domains.ts";
import { createMessageEngine } from "./composition/engine.ts";
import { buildApps, createControls, createTelemetry } from "./composition/http.ts";
import * as domains from "./composition/modules.ts";
import { ServerState, startServer, stopServer, type RunningServer, type RuntimeParts } from "./composition/runtime.ts";
import { loggerAndClock, openShared, type SharedOptions } from "./composition/shared.ts";

export type { RunningServer } from "./composition/runtime.ts";

export interface ServerOptions extends SharedOptions {
  /** More listeners of the message lifecycle, after the server's own (tests). */
  messageListeners?: MessageListener[];
}

/** Opens the storage the configuration names (PostgreSQL connects and migrates first), then builds the server. */
export async function openServer(config: ServerConfig, options: ServerOptions = {}): Promise<Server> {
  const { log, clock } = loggerAndClock(config, options);
  const storage = options.storage ?? (await openAnyStorageEngine(config, log, clock));
  try {
    return await createServer(config, { ...options, logger: log, clock, storage });
  } catch (error) {
    await storage.close();
    throw error;
  }
}

/** The delivery engine's parts, for tests and fault drills. */
export interface MessagingEngine {
  dispatcher: Dispatcher;
  pool: WorkerPool;
  events: MessageEvents;
  /** Idle and in-flight checks, as the control plane reads them. */
  probe: DeliveryProbe;
}

export interface Server {
  readonly ctx: AppContext;
  /** Where the state lives (tests reach the SQLite database through it). */
  readonly storage: StorageEngine;
  readonly messaging: MessagingEngine;
  start(): Promise<RunningServer>;
  /** Stops accepting, lets in-flight deliveries finish up to the deadline, closes the database. */
  stop(opts?: { deadlineMs?: number }): Promise<void>;
}

/**
 * Every domain, as one module each: its routes in this order (the APIs and their OpenAPI document
 * list them so), its background services started in this order after the message engine's.
 * A new domain is one more module here.
 */
const DOMAINS: ReadonlyArray<(parts: Parts) => ComposedModule | Promise<ComposedModule>> = [
  domains.signing,
  domains.messages,
  domains.dlq,
  domains.logs,
  domains.urlGroups,
  domains.queues,
  domains.schedules,
  domains.batch,
  domains.flowControl,
  domains.workflows,
  domains.mcp,
  domains.webConsole,
  domains.management,
  domains.controls,
  domains.faults,
  domains.statistics,
  domains.dedup,
  domains.retention,
];

/**
 * `POST /__svc/reset` runs (and answers) the modules' reset parts in this order, the one it always
 * had; a part not named here runs after these, in module order.
 */
const RESET_ORDER = [
  "statistics",
  "messages",
  "logs",
  "dlq",
  "url-groups",
  "queues",
  "schedules",
  "dedup",
  "workflows",
  "flow-control",
  "faults",
];

/**
 * The composition root: the shared pieces, the message engine, the domains that ride on it (each
 * receives what it uses in its constructor), the config file's fixtures, what this node follows of
 * other nodes' changes, the HTTP apps and the background services.
 * Throws a ConfigError when the config file or one of its fixtures is invalid.
 */
export async function createServer(config: ServerConfig, options: ServerOptions = {}): Promise<Server> {
  const shared = await openShared(config, options);
  const { ctx, storage } = shared;
  const engine = await createMessageEngine(shared, options.messageListeners ?? []);
  const parts: Parts = { ...shared, engine, domains: createDomainServices(shared, engine) };
  const modules = await Promise.all(DOMAINS.map((module) => module(parts)));
  await applyFixtures(parts);
  const resets = new ResetRegistry(ctx.commit, resetParts(modules));
  followOtherNodes(parts, modules);
  const state = new ServerState();
  const telemetry = createTelemetry(parts);
  const apps = buildApps(parts, modules, createControls(parts, resets), state, telemetry);
  // Background work, in start order; stopped in reverse. Delivery starts once the workers answer
  // and what was in flight at the last stop is due again; the scheduler only then fires what it missed.
  const { usage } = shared;
  const { recorder, pool, dispatcher } = engine;
  const services = new ServiceGroup(
    // Tracing stops after the rest, with the spans of the last outcomes.
    [...(shared.tracing ? [shared.tracing] : []), ...storage.services, usage, recorder, pool, dispatcher, ...modules.flatMap((m) => m.services ?? [])],
    ctx.log,
  );
  const runtime: RuntimeParts = { config, log: ctx.log, clock: ctx.clock, storage, engine, state, services, ...apps, ...telemetry };
  return {
    ctx,
    storage,
    messaging: { dispatcher, pool, events: engine.events, probe: engine.probe },
    start: () => startServer(runtime),
    stop: ({ deadlineMs = config.shutdownTimeoutMs } = {}) => stopServer(runtime, deadlineMs),
  };
}

/** Fixtures of the config file, in one write: queues and groups first, schedules may publish to them. */
async function applyFixtures({ ctx, storage, domains }: Parts): Promise<void> {
  const check = new FixtureChecker(ctx.config.configFile);
  const now = ctx.clock.now();
  const { queues, groups, schedules } = domains;
  // Nothing to store, no write: a start on a locked database (or a full disk) still answers reads.
  const listed = ctx.accounts.all().some((a) => [a.source.queues, a.source.urlGroups, a.source.schedules].some((f) => f?.length));
  if (!listed) return;
  await ctx.commit.run(async (tx) => {
    for (const [i, account] of ctx.accounts.all().entries()) {
      const base = `accounts[${i}]`;
      await applyQueueFixtures(tx, account, base, queues, check, now);
      await applyUrlGroupFixtures(tx, account, base, groups, check, now);
      await applyScheduleFixtures(tx, account, base, { schedules, store: storage.stores.schedules, dialect: ctx.dialect }, check, now);
    }
  });
}

function resetParts(modules: DomainModule[]): ResetPart[] {
  const parts = modules.flatMap((m) => m.resets ?? []);
  const rank = (part: ResetPart) => {
    const at = RESET_ORDER.indexOf(part.name);
    return at < 0 ? RESET_ORDER.length : at;
  };
  return parts
    .map((part, i) => ({ part, i }))
    .sort((a, b) => rank(a.part) - rank(b.part) || a.i - b.i)
    .map(({ part }) => part);
}

/**
 * Other processes sharing the storage: what they make due wakes this dispatcher; rotated keys and
 * what the domains watch are followed here too.
 */
function followOtherNodes({ ctx, storage, wake }: Parts, modules: DomainModule[]): void {
  const { membership } = storage;
  membership.onDue((atMs) => wake.ring(atMs));
  // What follows a change may read the storage: a failure is logged (the next change reloads again).
  const follow = (table: string, changed: () => void | Promise<void>) =>
    membership.watch(table, () => {
      Promise.resolve()
        .then(changed)
        .catch((error) => ctx.log.warn("following another node's change failed", { table, error: String(error) }));
    });
  follow("accounts", () => ctx.accounts.reloadKeys());
  for (const [table, changed] of modules.flatMap((m) => m.watches ?? [])) follow(table, changed);
}
