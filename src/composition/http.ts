import { consoleStaticRoutes } from "../console/routes.ts";
import type { DomainRoutes } from "../context/domain-module.ts";
import { ClockControl } from "../control/clock-control.ts";
import type { ResetRegistry } from "../control/reset.ts";
import { healthRoutes, type ControlDeps } from "../control/routes.ts";
import { statusRoutes } from "../control/status.ts";
import { rateWindowWaits } from "../control/worker-waits.ts";
import { lanePrefix } from "../flow-control/lane-key.ts";
import { buildHttpApp } from "../http/app.ts";
import type { RoutePlugin } from "../http/plugin.ts";
import { openApiRoutes } from "../openapi/routes.ts";
import { buildInfo } from "../startup/build-info.ts";
import { LiveEventStreams } from "../telemetry/live-events.ts";
import { ServerMetrics } from "../telemetry/prometheus.ts";
import { liveEventRoutes, metricsRoutes } from "../telemetry/routes.ts";
import type { ComposedModule, Parts } from "./domains.ts";
import type { ServerState } from "./runtime.ts";

/** Observers of the bus: Prometheus metrics (levels read at scrape time) and the console's live event streams. */
export interface Telemetry {
  metrics: ServerMetrics;
  liveEvents: LiveEventStreams;
}

export function createTelemetry(parts: Parts): Telemetry {
  const { ctx, storage, engine } = parts;
  const { clock, config, accounts } = ctx;
  const { pool } = engine;
  const { dlq } = storage.stores;
  const metrics = new ServerMetrics(engine.events, {
    clock,
    build: buildInfo(),
    workers: config.workers,
    census: (nowMs) => storage.stores.messages.census(nowMs),
    dlqCounts: () =>
      Promise.all(
        accounts.all().map(async (account): Promise<[string, number]> => [account.id, await dlq.count(account.id)]),
      ),
    workerLoad: () => pool.load,
    workerBusySeconds: () => pool.busySeconds,
    storageBytes: () => storage.sizeBytes(),
    commitCounts: () => ctx.commit.counts,
    faultsInjected: () => parts.faults.rules.injectedCounts(),
  });
  return { metrics, liveEvents: new LiveEventStreams(engine.events) };
}

/**
 * What the test double's controls act through: the reset of one account (every module's part, in
 * one transaction), flush and time control, and how many processes share the storage.
 */
export function createControls({ ctx, storage, engine }: Parts, resets: ResetRegistry): ControlDeps {
  const { pool } = engine;
  // Flow-control rate windows run on the workers' copy of the clock: their releases are steps too.
  const clock = new ClockControl(ctx.clock, engine.probe, rateWindowWaits(() => pool.flowStats({ prefix: "" })));
  return { resets, clock, nodes: () => storage.membership.nodes() };
}

/**
 * The test double's control plane, which both ports serve: health first, then what the domains
 * add (among them reset, flush and time control), status, metrics and the live event stream.
 */
function controlPlane(
  parts: Parts,
  fromDomains: RoutePlugin[],
  state: ServerState,
  telemetry: Telemetry,
): RoutePlugin[] {
  const { ctx, storage, engine } = parts;
  const { dispatcher, pool } = engine;
  const { messages, dlq } = storage.stores;
  return [
    healthRoutes({
      ready: () => state.ready,
      notReadyReason: () => (dispatcher.waitingFor ? `recovering the previous run: ${dispatcher.waitingFor}` : null),
      probeStore: () => storage.probe(),
      pingWorkers: () => pool.ping(),
    }),
    ...fromDomains,
    statusRoutes(ctx, {
      messageCounts: (id, nowMs) => messages.accountCensus(id, nowMs),
      heldByWorkers: async (id) =>
        (await pool.flowStats({ prefix: lanePrefix(id) })).reduce((n, lane) => n + lane.waiting, 0),
      dlqCount: (id) => dlq.count(id),
    }),
    metricsRoutes(telemetry.metrics, ctx.config.metricsToken),
    liveEventRoutes(ctx, telemetry.liveEvents),
  ];
}

export interface HttpApps {
  mainApp: RoutePlugin;
  /** The management API's own app when it has its own port. */
  managementApp: RoutePlugin | null;
}

/**
 * The messaging API, the management API (on its own port when configured) and the control plane,
 * from the domains' modules in list order.
 */
export function buildApps(
  parts: Parts,
  modules: ComposedModule[],
  controls: ControlDeps,
  state: ServerState,
  telemetry: Telemetry,
): HttpApps {
  const { config, log, dialect } = parts.ctx;
  const routes = modules.flatMap((m): DomainRoutes[] => [m.routes ?? {}, m.controlled?.(controls) ?? {}]);
  const plugins = (kind: "messaging" | "management" | "control") => routes.flatMap((r) => r[kind] ?? []);
  const messaging = plugins("messaging");
  const management = plugins("management");
  const fast = routes.flatMap((r) => r.fast ?? []);
  const control = controlPlane(parts, plugins("control"), state, telemetry);
  const docs = openApiRoutes({ messaging, management, control, dialect, managementUrl: () => state.managementUrl });
  const separateManagement = config.managementPort !== null;
  const observeRequest = telemetry.metrics.observeRequest.bind(telemetry.metrics);
  // The web console's pages are Bun's static routes of the main app; they read the APIs above.
  const mainApp = buildHttpApp(
    [...control, docs, ...messaging, ...(separateManagement ? [] : management)],
    log,
    consoleStaticRoutes,
    observeRequest,
    fast,
    // Fault injection: an injected answer to a messaging request, before it is routed.
    parts.faults.intercept,
  );
  const managementApp = separateManagement ? buildHttpApp([...control, docs, ...management], log, {}, observeRequest) : null;
  return { mainApp, managementApp };
}
