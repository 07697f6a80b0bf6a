import type { Elysia } from "elysia";
import { AccountRegistry } from "./accounts/accounts.ts";
import { AccountStore } from "./accounts/store.ts";
import type { AppContext } from "./context/app-context.ts";
import { loadConfigFile, type ConfigFile } from "./config/config-file.ts";
import type { ServerConfig } from "./config/config.ts";
import { ManualClock, RealClock, type Clock } from "./core/clock.ts";
import { DIALECTS } from "./core/dialect.ts";
import { createLogger, type Logger } from "./core/log.ts";
import { ClockControl } from "./control/clock-control.ts";
import { ResetRegistry, registerMessagingResets } from "./control/reset.ts";
import { controlRoutes, healthRoutes } from "./control/routes.ts";
import { rateWindowWaits } from "./control/worker-waits.ts";
import { createManagementDomain } from "./management/domain.ts";
import { createMessagingDomain } from "./messages/domain.ts";
import { createGroupsSchedulesQueues } from "./groups-schedules-queues.ts";
import type { UsageRecorder } from "./metrics/usage.ts";
import { buildHttpApp } from "./http/app.ts";
import { signingKeyRoutes } from "./signing/routes.ts";
import { openApiRoutes } from "./openapi/routes.ts";
import { migrate, openDatabase } from "./store/db.ts";
import { GroupCommit } from "./store/group-commit.ts";
import { startBackgroundCheckpointer } from "./store/wal.ts";
import { MIGRATIONS } from "./store/schema.ts";

export interface ServerOptions {
  /** A parsed config file, instead of reading `config.configFile` (tests). */
  configFile?: ConfigFile;
  logger?: Logger;
  clock?: Clock;
}

export interface RunningServer {
  url: string;
  managementUrl: string;
  port: number;
  managementPort: number;
}

export interface Server {
  readonly ctx: AppContext;
  /** The messaging engine (stores, dispatcher, worker pool), for tests and fault drills. */
  readonly messaging: ReturnType<typeof createMessagingDomain>;
  start(): Promise<RunningServer>;
  /** Stops accepting, lets in-flight deliveries finish up to the deadline, closes the database. */
  stop(opts?: { deadlineMs?: number }): Promise<void>;
}

export function createServer(config: ServerConfig, options: ServerOptions = {}): Server {
  const log = options.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const configFile = options.configFile ?? (config.configFile ? loadConfigFile(config.configFile) : null);
  const clock = options.clock ?? (config.clock === "manual" ? new ManualClock(Date.now()) : new RealClock());
  const dialect = DIALECTS[config.dialect];
  const db = openDatabase(config.dbPath, config.busyTimeoutMs);
  migrate(db, MIGRATIONS);
  // WAL checkpoints (copy + fsync) run on their own thread, never inside a publish commit.
  const checkpointer = config.dbPath ? startBackgroundCheckpointer(db, config.dbPath, log) : null;
  const accounts = new AccountRegistry(
    new AccountStore(db),
    AccountRegistry.entriesFrom(configFile, config.defaultAccount),
    configFile?.plans,
  );
  const ctx: AppContext = { config, clock, log, db, dialect, accounts, commit: new GroupCommit(db) };

  let ready = false;

  type Plugin = Elysia<any, any, any, any, any, any, any>;
  const messaging: Plugin[] = [signingKeyRoutes(ctx)];
  const management: Plugin[] = [];
  const control: Plugin[] = [healthRoutes({ ready: () => ready })];
  /** Work to do at shutdown after deliveries stopped and before the database closes. */
  const onStop: Array<() => void | Promise<void>> = [];
  /** `POST /__svc/reset`: each domain registers how to wipe one account (see src/control/reset.ts). */
  const resets = new ResetRegistry(ctx.commit);

  // Management API and the usage-metrics engine every statistic reads.
  // Called per statistics request, after the messaging domain below exists.
  const managementDomain = createManagementDomain(ctx, { dlqCount: (id) => messagingDomain.stores.dlq.count(id) });
  const metrics: UsageRecorder = managementDomain.metrics;
  management.push(...managementDomain.managementRoutes);
  control.push(...managementDomain.controlRoutes);
  onStop.push(() => managementDomain.stop());
  resets.register("statistics", (id) => managementDomain.metrics.forget(id));

  const messagingDomain = createMessagingDomain(ctx, metrics);
  messaging.push(...messagingDomain.routes);

  // URL Groups, schedules, queues, batch, deduplication and flow control ride on the messaging engine.
  const groupsSchedulesQueues = createGroupsSchedulesQueues(ctx, messagingDomain);
  messaging.push(...groupsSchedulesQueues.routes);
  onStop.push(() => groupsSchedulesQueues.stop());
  for (const part of groupsSchedulesQueues.resets) resets.register(part.name, part.reset);

  // The test double: control plane, time control, OpenAPI.
  registerMessagingResets(resets, messagingDomain);
  control.push(
    controlRoutes(ctx, {
      ready: () => ready,
      probeStore: () => db.query("SELECT 1").get(),
      pingWorkers: () => messagingDomain.pool.ping(),
      resets,
      // Flow-control rate windows run on the workers' copy of the clock: their releases are steps too.
      clock: new ClockControl(clock, messagingDomain.dispatcher, ctx.commit, rateWindowWaits(() => messagingDomain.pool.flowStats({ prefix: "" }))),
    }),
    // Reads the built apps' route tables lazily, at request time: they are built below.
    openApiRoutes({
      apps: () => [mainApp, managementApp],
      messaging,
      management,
      dialect,
      managementUrl: () => (managementApp?.server ? `http://${config.host}:${managementApp.server.port}` : null),
    }),
  );

  const separateManagement = config.managementPort !== null;
  const mainApp = buildHttpApp([...control, ...messaging, ...(separateManagement ? [] : management)], log);
  const managementApp = separateManagement ? buildHttpApp([...control, ...management], log) : null;

  let stopped = false;
  return {
    ctx,
    messaging: messagingDomain,
    async start() {
      await messagingDomain.start();
      mainApp.listen({ port: config.port, hostname: config.host });
      managementApp?.listen({ port: config.managementPort!, hostname: config.host });
      ready = true;
      const port = mainApp.server!.port!;
      const managementPort = managementApp ? managementApp.server!.port! : port;
      const base = config.publicUrl ?? `http://${config.host}:${port}`;
      const managementUrl = managementApp ? `http://${config.host}:${managementPort}` : base;
      return { url: base, managementUrl, port, managementPort };
    },
    async stop({ deadlineMs = config.shutdownTimeoutMs } = {}) {
      if (stopped) return;
      stopped = true;
      ready = false;
      await Promise.all([mainApp.stop(), managementApp?.stop()]);
      await messagingDomain.drain(deadlineMs);
      for (const fn of onStop) await fn();
      ctx.commit.flush();
      await checkpointer?.stop();
      db.close();
    },
  };
}
