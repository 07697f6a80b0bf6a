import { RequestLimits } from "./accounts/rate-limits.ts";
import { AccountRegistry } from "./accounts/accounts.ts";
import { batchRoutes } from "./batch/routes.ts";
import { BatchService } from "./batch/service.ts";
import { loadConfigFile, type ConfigFile } from "./config/config-file.ts";
import type { ServerConfig } from "./config/config.ts";
import { FixtureChecker } from "./config/fixture-check.ts";
import type { AppContext } from "./context/app-context.ts";
import { ClockControl } from "./control/clock-control.ts";
import { ResetRegistry } from "./control/reset.ts";
import { controlActions, controlRoutes, healthRoutes, type ControlDeps } from "./control/routes.ts";
import { statusRoutes } from "./control/status.ts";
import { consoleEntryRoutes, consoleStaticRoutes } from "./console/routes.ts";
import { rateWindowWaits } from "./control/worker-waits.ts";
import { ManualClock, RealClock, type Clock } from "./core/clock.ts";
import { DIALECTS } from "./core/dialect.ts";
import { createLogger, type Logger } from "./core/log.ts";
import { ServiceGroup } from "./core/service.ts";
import { WakeSignal } from "./core/wake.ts";
import { createDeduplicator, dedupReads } from "./dedup/deduplicator.ts";
import { Dispatcher } from "./delivery/dispatcher.ts";
import { InFlightAttempts } from "./delivery/in-flight.ts";
import { OutcomeRecorder } from "./delivery/outcome-recorder.ts";
import { WorkerPool } from "./delivery/pool.ts";
import { DeliveryProbe } from "./delivery/probe.ts";
import { DeadLetters } from "./dlq/dead-letters.ts";
import { dlqRoutes } from "./dlq/routes.ts";
import { DlqService } from "./dlq/service.ts";
import { globalSlotsLayout } from "./flow-control/global-slots.ts";
import { FlowLanes } from "./flow-control/lanes.ts";
import { lanePrefix } from "./flow-control/lane-key.ts";
import { flowControlRoutes } from "./flow-control/routes.ts";
import { FlowControlService } from "./flow-control/service.ts";
import { FlowKeySettings, rateWindowListener } from "./flow-control/steering.ts";
import { flowWorkerGreeting } from "./flow-control/worker-greeting.ts";
import { buildHttpApp } from "./http/app.ts";
import { createFaultDomain } from "./faults/domain.ts";
import type { RoutePlugin } from "./http/plugin.ts";
import { listen } from "./http/listen.ts";
import { eventLogListener } from "./logs/event-log.ts";
import { logRoutes } from "./logs/routes.ts";
import { createManagementDomain } from "./management/domain.ts";
import { CancelService } from "./messages/cancel.ts";
import { MessageLifecycle } from "./messages/lifecycle.ts";
import { PublishService } from "./messages/publish.ts";
import { Retention } from "./messages/retention.ts";
import { messageRoutes, publishRoute } from "./messages/routes.ts";
import { readAccountMessages } from "./messages/store.ts";
import { messagingUsageListener } from "./messages/usage.ts";
import { mcpRoutes } from "./mcp/routes.ts";
import { MetricsEngine } from "./metrics/engine.ts";
import { MessageEvents, type MessageListener } from "./model/events.ts";
import { openApiRoutes } from "./openapi/routes.ts";
import { applyQueueFixtures } from "./queues/fixtures.ts";
import { QueueLanes } from "./queues/lanes.ts";
import { enqueueRoute, queueRoutes } from "./queues/routes.ts";
import { QueueService } from "./queues/service.ts";
import { applyScheduleFixtures } from "./schedules/fixtures.ts";
import { scheduleRoutes } from "./schedules/routes.ts";
import { Scheduler } from "./schedules/scheduler.ts";
import { ScheduleService } from "./schedules/service.ts";
import { scheduleStatesListener } from "./schedules/states.ts";
import { signingKeyRoutes } from "./signing/routes.ts";
import { logDeliveries } from "./telemetry/delivery-log.ts";
import { ShutdownSummary } from "./telemetry/shutdown-summary.ts";
import { ServerMetrics } from "./telemetry/prometheus.ts";
import { LiveEventStreams } from "./telemetry/live-events.ts";
import { liveEventRoutes, metricsRoutes } from "./telemetry/routes.ts";
import { buildInfo } from "./startup/build-info.ts";
import { applyUrlGroupFixtures } from "./url-groups/fixtures.ts";
import { urlGroupRoutes } from "./url-groups/routes.ts";
import { UrlGroupService } from "./url-groups/service.ts";
import { createWorkflowDomain, createWorkflowHooks } from "./workflows/domain.ts";
import type { StorageEngine } from "./engines/engine.ts";
import { openAnyStorageEngine, openStorageEngine } from "./engines/open.ts";

export interface ServerOptions {
  /** A parsed config file, instead of reading `config.configFile` (tests). */
  configFile?: ConfigFile;
  logger?: Logger;
  clock?: Clock;
  /** More listeners of the message lifecycle, after the server's own (tests). */
  messageListeners?: MessageListener[];
  /** An engine opened already (openServer opens PostgreSQL this way); else SQLite is opened here. */
  storage?: StorageEngine;
}

/** Opens the storage the configuration names (PostgreSQL connects and migrates first), then builds the server. */
export async function openServer(config: ServerConfig, options: ServerOptions = {}): Promise<Server> {
  const log = options.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const clock = options.clock ?? (config.clock === "manual" ? new ManualClock(Date.now()) : new RealClock());
  const storage = options.storage ?? (await openAnyStorageEngine(config, log, clock));
  try {
    return createServer(config, { ...options, logger: log, clock, storage });
  } catch (error) {
    await storage.close();
    throw error;
  }
}

export interface RunningServer {
  url: string;
  managementUrl: string;
  port: number;
  managementPort: number;
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
 * The composition root: every part of svcd is built here, in dependency order, and receives what
 * it uses in its constructor. Read top to bottom: shared pieces, the message engine, the domains
 * that ride on it, fixtures, the test-double control plane, the HTTP apps, the background services.
 * Throws a ConfigError when the config file or one of its fixtures is invalid.
 */
export function createServer(config: ServerConfig, options: ServerOptions = {}): Server {
  // Shared pieces: one logger, one clock, one database (with every domain's migrations) written
  // through one group commit, the accounts, the usage-metrics engine and the dispatcher's wake signal.
  const log = options.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const configFile = options.configFile ?? (config.configFile ? loadConfigFile(config.configFile) : null);
  const clock = options.clock ?? (config.clock === "manual" ? new ManualClock(Date.now()) : new RealClock());
  const dialect = DIALECTS[config.dialect];
  const storage = options.storage ?? openStorageEngine(config, log);
  const { commit, stores } = storage;
  const hostedTokens = dialect.name === "upstash";
  const requestLimits = new RequestLimits(clock);
  const accounts = new AccountRegistry(
    stores.accounts,
    AccountRegistry.entriesFrom(configFile, config.defaultAccount, hostedTokens),
    configFile?.plans,
    hostedTokens,
    requestLimits,
  );
  const ctx: AppContext = { config, clock, log, dialect, accounts, commit };
  const usage = new MetricsEngine(stores.rollups, clock, { log });
  const wake = new WakeSignal();

  const {
    messages: messageStore,
    events: eventStore,
    dlq: dlqStore,
    queues: queueStore,
    schedules: scheduleStore,
    flow: flowStore,
    flowKeys,
    groups: groupStore,
    dedup: dedupStore,
  } = stores;
  const flowSettings = new FlowKeySettings(flowKeys);
  // Workflow runs ride on the engine: what their publishes, deliveries and message endings do.
  const workflowHooks = createWorkflowHooks(ctx, usage, { runs: stores.runs, waits: stores.waits, dlq: stores.dlq });

  // The message lifecycle. What must move with every message, inside the write that moves it:
  // the event log, usage statistics, queues (the next message goes when one ends) and schedules
  // (lastScheduleStates). Queues also decide on admission whether a new message waits.
  const queueLanes = new QueueLanes(queueStore, accounts, wake.ring);
  const events = new MessageEvents(commit, log, [
    eventLogListener(eventStore),
    messagingUsageListener(usage),
    queueLanes.listener,
    scheduleStatesListener(scheduleStore),
    workflowHooks.listener,
    rateWindowListener(flowSettings, flowKeys),
    requestLimits.listener(accounts),
    ...(options.messageListeners ?? []),
  ]);
  logDeliveries(events, log);
  const lifecycle = new MessageLifecycle({
    store: messageStore,
    events,
    admit: queueLanes.admit,
    deadLetters: workflowHooks.deadLetters(new DeadLetters(dlqStore, storage.dlqIds?.())),
  });

  // Delivery: the dispatcher claims due messages (flow control gates each one) and hands them to
  // the workers; the recorder records what each attempt came back with. Every worker learns the
  // flow-control state kept outside it (paused and pinned keys, rate windows, global limits).
  const flowLanes = new FlowLanes(flowStore, flowSettings, wake.ring);
  const inFlight = new InFlightAttempts();
  const recorder = new OutcomeRecorder({
    ...ctx,
    inFlight,
    claims: messageStore,
    lifecycle,
    gate: flowLanes,
    wake: wake.ring,
    refuseAnswer: workflowHooks.refuseAnswer,
  });
  const globalSlots = globalSlotsLayout(
    config.workers,
    accounts.all().map((a) => ({ accountId: a.id, max: a.limits.flowGlobalParallelism })),
  );
  const greeting = () => flowWorkerGreeting({ settings: flowSettings, keys: flowKeys, global: globalSlots, clock });
  // Fault injection: rules a test sets; the dispatcher asks them for each attempt, the HTTP app for each request.
  const faults = createFaultDomain(ctx);
  const pool = new WorkerPool({ size: config.workers, onOutcome: recorder.add, log, clock, greeting });
  const dispatcher = new Dispatcher({
    ...ctx,
    store: messageStore,
    lifecycle,
    pool,
    inFlight,
    recorder,
    gate: flowLanes,
    wakeSignal: wake,
    deliveryBody: workflowHooks.deliveryBody,
    fault: faults.deliveryFault,
  });
  const forget = (messageId: string) => dispatcher.forget(messageId);

  // The domains on top of the engine. Publishing resolves URL Groups, deduplicates, and may claim
  // a message in the commit that stores it.
  const groups = new UrlGroupService(groupStore);
  const publisher = new PublishService(ctx, {
    lifecycle,
    usage,
    resolveGroup: groups.resolve,
    deduplicate: createDeduplicator(dedupStore),
    dedupReads,
    claimNow: dispatcher.claimStored,
    wake: wake.ring,
    admit: workflowHooks.publishes.admit,
    admitReads: workflowHooks.publishes.reads,
  });
  const cancels = new CancelService(ctx, messageStore, lifecycle, forget);
  const queues = new QueueService(queueStore, queueLanes, messageStore, lifecycle, forget);
  const deadLetterQueue = new DlqService(ctx, dlqStore, lifecycle, wake.ring);
  const flow = new FlowControlService({
    liveLanes: (filter) => pool.flowStats(filter),
    tellWorkers: (message) => pool.broadcast(message),
    store: flowStore,
    keys: flowKeys,
    settings: flowSettings,
    lanes: flowLanes,
    global: globalSlots,
    commit,
    clock,
  });
  const scheduler = new Scheduler(ctx, scheduleStore, publisher, wake.ring);
  const schedules = new ScheduleService(ctx, scheduleStore, publisher, queues, scheduler);
  const batch = new BatchService(ctx, publisher, queues, wake.ring, workflowHooks.publishes.isWorkflow);
  const workflows = createWorkflowDomain(ctx, workflowHooks, {
    messages: messageStore,
    lifecycle,
    forget,
    inFlight: (messageId) => dispatcher.isInFlight(messageId),
    wake: wake.ring,
    publisher,
    dlq: dlqStore,
    usage,
  });
  // Where several processes share the storage, only the leader prunes.
  const retention = new Retention(ctx, eventStore, dlqStore, [workflowHooks.runs], () => storage.leads?.() ?? true);
  const management = createManagementDomain(ctx, {
    engine: usage,
    dlqCount: (id) => dlqStore.count(id),
    stores: { search: stores.search, vector: stores.vector, ledger: stores.usageLedger },
  });

  // Fixtures of the config file: queues and groups first, schedules may publish to them.
  const check = new FixtureChecker(config.configFile);
  const now = clock.now();
  commit.nested(() => {
    accounts.all().forEach((account, i) => {
      const base = `accounts[${i}]`;
      applyQueueFixtures(account, base, queues, check, now);
      applyUrlGroupFixtures(account, base, groups, check, now);
      applyScheduleFixtures(account, base, { schedules, store: scheduleStore, dialect }, check, now);
    });
  });

  // The test double's control plane: reset of one account (every part, in one transaction),
  // flush and time control.
  const resets = new ResetRegistry(commit, [
    { name: "statistics", reset: (id) => usage.forget(id) },
    {
      name: "messages",
      // A late answer of a deleted message's attempt must not resurrect it in the log or the DLQ.
      reset: (id) => messageStore.deleteAccount(id).forEach(forget),
      reads: (id) => [readAccountMessages(id)],
    },
    { name: "logs", reset: (id) => eventStore.deleteAccount(id) },
    { name: "dlq", reset: (id) => dlqStore.deleteAccount(id) },
    { name: "url-groups", reset: (id) => groupStore.deleteAccount(id) },
    { name: "queues", reset: (id) => queueStore.deleteAccount(id) },
    { name: "schedules", reset: (id) => schedules.deleteAccount(id) },
    { name: "dedup", reset: (id) => dedupStore.deleteAccount(id) },
    { name: "workflows", reset: (id) => workflows.reset(id) },
    { name: "flow-control", reset: (id) => flow.forgetAccount(id) },
    faults.resetPart,
  ]);
  // Other processes sharing the storage: what they make due wakes this dispatcher; schedules and
  // rotated keys they changed are followed here too.
  storage.onDue?.((atMs) => wake.ring(atMs));
  storage.watch?.("schedules", () => scheduler.rearm());
  storage.watch?.("accounts", () => accounts.reloadKeys());
  // A waiter stored through another node: its deadline may be the earliest (every node arms it; one fires it).
  storage.watch?.("workflow_waiters", workflows.waitersChanged);
  // A key paused, resumed or pinned through another node: this node's workers (the key's owner's) follow.
  storage.watch?.("flow_keys", () => {
    for (const { lane, steering, resetWindow } of flowSettings.reload())
      pool.broadcast({ type: "flow-steer", key: lane, steering, resetWindow });
    wake.ring();
  });

  // Prometheus metrics: counters from the event bus, levels read at scrape time.
  const metrics = new ServerMetrics(events, {
    clock,
    build: buildInfo(),
    workers: config.workers,
    census: (nowMs) => messageStore.census(nowMs),
    dlqCounts: () => Promise.all(accounts.all().map(async (account): Promise<[string, number]> => [account.id, await stores.dlq.count(account.id)])),
    workerLoad: () => pool.load,
    workerBusySeconds: () => pool.busySeconds,
    storageBytes: () => storage.sizeBytes(),
    faultsInjected: () => faults.rules.injectedCounts(),
  });
  // Live views (the console): the account's message events as server-sent events.
  const liveEvents = new LiveEventStreams(events);
  const probe = new DeliveryProbe({ dispatcher, inFlight, recorder, store: messageStore, commit });
  // Flow-control rate windows run on the workers' copy of the clock: their releases are steps too.
  const clockControl = new ClockControl(clock, probe, rateWindowWaits(() => pool.flowStats({ prefix: "" })));

  // HTTP: the messaging API, the management API (on its own port when configured) and the
  // control plane, which both ports serve.
  let ready = false;
  const listening = { managementUrl: null as string | null };
  const control: ControlDeps = { resets, clock: clockControl, nodes: () => storage.nodes?.() ?? 1 };
  // Agents' door to the same services: the MCP tools call what the routes below call.
  const mcp = mcpRoutes(ctx, {
    ctx,
    publisher,
    messages: messageStore,
    events: eventStore,
    dlqStore,
    dlq: deadLetterQueue,
    dlqFields: workflows.dlqFields,
    queues,
    schedules,
    flow,
    runs: workflows.runs,
    waits: workflows.waits,
    control: controlActions(control),
  }, buildInfo().version);
  const messagingPlugins: RoutePlugin[] = [
    signingKeyRoutes(ctx),
    messageRoutes(ctx, publisher, messageStore, cancels),
    dlqRoutes(ctx, dlqStore, deadLetterQueue, workflows.dlqFields),
    logRoutes(ctx, eventStore),
    urlGroupRoutes(ctx, groups),
    queueRoutes(ctx, queues, publisher),
    scheduleRoutes(ctx, schedules),
    batchRoutes(ctx, batch),
    flowControlRoutes(ctx, flow),
    ...workflows.routes,
    mcp,
    // The web console lives beside the messaging API (main port only): `/` sends browsers there.
    consoleEntryRoutes(),
  ];
  const managementPlugins: RoutePlugin[] = management.managementRoutes;
  const controlPlugins: RoutePlugin[] = [
    healthRoutes({
      ready: () => ready,
      notReadyReason: () => (dispatcher.waitingFor ? `recovering the previous run: ${dispatcher.waitingFor}` : null),
      probeStore: () => storage.probe(),
      pingWorkers: () => pool.ping(),
    }),
    ...management.controlRoutes,
    controlRoutes(ctx, control),
    faults.routes,
    statusRoutes(ctx, {
      messageCounts: (id, nowMs) => messageStore.accountCensus(id, nowMs),
      heldByWorkers: async (id) => (await pool.flowStats({ prefix: lanePrefix(id) })).reduce((n, lane) => n + lane.waiting, 0),
      dlqCount: (id) => dlqStore.count(id),
    }),
    metricsRoutes(metrics, config.metricsToken),
    liveEventRoutes(ctx, liveEvents),
  ];
  const docs = openApiRoutes({
    messaging: messagingPlugins,
    management: managementPlugins,
    control: controlPlugins,
    dialect,
    managementUrl: () => listening.managementUrl,
  });
  const separateManagement = config.managementPort !== null;
  // The web console's pages are Bun's static routes of the main app; they read the APIs above.
  const observeRequest = metrics.observeRequest.bind(metrics);
  const mainApp = buildHttpApp(
    [...controlPlugins, docs, ...messagingPlugins, ...(separateManagement ? [] : managementPlugins)],
    log,
    consoleStaticRoutes,
    observeRequest,
    // Publishing is the hottest request: Bun routes it straight to its handler.
    [publishRoute(ctx, publisher), enqueueRoute(ctx, queues, publisher)],
    faults.intercept,
  );
  const managementApp = separateManagement ? buildHttpApp([...controlPlugins, docs, ...managementPlugins], log, {}, observeRequest) : null;

  // Background work, in start order; stopped in reverse. Delivery starts once the workers answer
  // and what was in flight at the last stop is due again; the scheduler only then fires what it missed.
  const services = new ServiceGroup(
    [...storage.services, usage, recorder, pool, dispatcher, scheduler, ...workflows.services, retention],
    log,
  );

  /** The stored messages after the stop; null when storage cannot be read. */
  const storedCensus = async () => {
    try {
      return await messageStore.census(clock.now());
    } catch {
      return null;
    }
  };

  let stopped = false;
  return {
    ctx,
    storage,
    messaging: { dispatcher, pool, events, probe },
    async start() {
      await services.start();
      try {
        listen(mainApp, { port: config.port, host: config.host, flag: "--port" });
        if (managementApp) listen(managementApp, { port: config.managementPort!, host: config.host, flag: "--management-port" });
      } catch (error) {
        // The port that did bind is freed, the background services end: nothing outlives a failed start.
        if (mainApp.server) await mainApp.stop();
        await services.stop(Date.now());
        throw error;
      }
      ready = true;
      const port = mainApp.server!.port!;
      const managementPort = managementApp ? managementApp.server!.port! : port;
      const base = config.publicUrl ?? `http://${config.host}:${port}`;
      const managementUrl = managementApp ? `http://${config.host}:${managementPort}` : base;
      listening.managementUrl = managementApp ? managementUrl : null;
      return { url: base, managementUrl, port, managementPort };
    },
    async stop({ deadlineMs = config.shutdownTimeoutMs } = {}) {
      if (stopped) return;
      stopped = true;
      ready = false;
      const summary = new ShutdownSummary(events, inFlight.size);
      // An open event stream never ends by itself: the listeners would wait for it.
      liveEvents.closeAll();
      await Promise.all([mainApp.stop(), managementApp?.stop()]);
      await services.stop(Date.now() + deadlineMs);
      await commit.flush();
      log.info("stopped", summary.finish(await storedCensus()));
      await storage.close();
    },
  };
}
