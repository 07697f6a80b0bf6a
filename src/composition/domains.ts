import { createDeduplicator, dedupReads } from "../dedup/deduplicator.ts";
import { PublishService } from "../messages/publish.ts";
import { QueueService } from "../queues/service.ts";
import { Scheduler } from "../schedules/scheduler.ts";
import { ScheduleService } from "../schedules/service.ts";
import { UrlGroupService } from "../url-groups/service.ts";
import { createWorkflowDomain } from "../workflows/domain.ts";
import type { MessageEngine } from "./engine.ts";
import type { Shared } from "./shared.ts";

/** The services of the domains that other domains' modules use too. */
export interface DomainServices {
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
  const { lifecycle, workflowHooks, dispatcher, forget } = engine;
  const groups = new UrlGroupService(stores.groups);
  const publisher = new PublishService(ctx, {
    lifecycle,
    usage,
    resolveGroup: groups.resolve,
    deduplicate: createDeduplicator(stores.dedup),
    dedupReads,
    claimNow: dispatcher.claimStored,
    wake: wake.ring,
    admit: workflowHooks.publishes.admit,
    admitReads: workflowHooks.publishes.reads,
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
  return { groups, publisher, queues, scheduler, schedules, workflows };
}
