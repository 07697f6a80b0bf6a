import type { DomainModule, DomainRoutes } from "../context/domain-module.ts";
import type { ControlDeps } from "../control/routes.ts";
import { createDeduplicator } from "../dedup/deduplicator.ts";
import { DlqService } from "../dlq/service.ts";
import { clusterLanes } from "../flow-control/cluster-lanes.ts";
import { FlowControlService, type LiveLanes } from "../flow-control/service.ts";
import { PublishService } from "../messages/publish.ts";
import { QueueService } from "../queues/service.ts";
import { Scheduler } from "../schedules/scheduler.ts";
import { ScheduleService } from "../schedules/service.ts";
import { UrlGroupService } from "../url-groups/service.ts";
import { createWorkflowDomain } from "../workflows/domain.ts";
import type { MessageEngine } from "./engine.ts";
import type { Shared } from "./shared.ts";

/** The services of the domains that other domains' modules (the MCP tools') use too. */
export interface DomainServices {
  dlq: DlqService;
  flow: FlowControlService;
  groups: UrlGroupService;
  publisher: PublishService;
  queues: QueueService;
  scheduler: Scheduler;
  schedules: ScheduleService;
  workflows: ReturnType<typeof createWorkflowDomain>;
}

/** What a domain's module is built from. */
export interface Parts extends Shared {
  engine: MessageEngine;
  domains: DomainServices;
}

/**
 * The domains on top of the engine, in dependency order. Publishing resolves URL Groups,
 * deduplicates, and may claim a message in the commit that stores it.
 */
export function createDomainServices(shared: Shared, engine: MessageEngine): DomainServices {
  const { ctx, storage, usage, wake } = shared;
  const { stores } = storage;
  const { lifecycle, workflowHooks, dispatcher, forget, pool } = engine;
  const dlq = new DlqService(ctx, stores.dlq, lifecycle, wake.ring);
  const liveLanes: LiveLanes = (filter) => pool.flowStats(filter);
  const flow = new FlowControlService({
    liveLanes,
    clusterLanes: clusterLanes(liveLanes, storage.membership),
    tellWorkers: (message) => pool.broadcast(message),
    store: stores.flow,
    keys: stores.flowKeys,
    settings: engine.flowSettings,
    lanes: engine.flowLanes,
    global: engine.globalSlots,
    commit: ctx.commit,
    clock: ctx.clock,
  });
  const groups = new UrlGroupService(stores.groups);
  const publisher = new PublishService(ctx, {
    lifecycle,
    usage,
    resolveGroup: groups.resolve,
    deduplicate: createDeduplicator(stores.dedup),
    claimOnInsert: dispatcher.claimOnInsert,
    wake: wake.ring,
    admit: workflowHooks.publishes.admit,
  });
  const queues = new QueueService(stores.queues, engine.queueLanes, stores.messages, lifecycle, forget);
  const scheduler = new Scheduler(ctx, stores.schedules, publisher, wake.ring);
  const schedules = new ScheduleService(ctx, stores.schedules, publisher, queues, scheduler);
  const workflows = createWorkflowDomain(ctx, workflowHooks, {
    messages: stores.messages,
    lifecycle,
    forget,
    inFlight: (messageId) => dispatcher.isInFlight(messageId),
    wake: wake.ring,
    publisher,
    dlq: stores.dlq,
    usage,
  });
  return { dlq, flow, groups, publisher, queues, scheduler, schedules, workflows };
}

/**
 * A domain's module as the composition root lists it. Routes that act through the test double's
 * controls (reset, flush, clock) can only be built once every module's reset part is known: they
 * come from `controlled` then, and take the module's place in the APIs all the same.
 */
export interface ComposedModule extends DomainModule {
  controlled?: (controls: ControlDeps) => DomainRoutes;
}
