import { batchRoutes } from "../batch/routes.ts";
import { BatchService } from "../batch/service.ts";
import { consoleEntryRoutes } from "../console/routes.ts";
import type { DomainModule } from "../context/domain-module.ts";
import { dlqRoutes } from "../dlq/routes.ts";
import { DlqService } from "../dlq/service.ts";
import { flowControlRoutes } from "../flow-control/routes.ts";
import { FlowControlService } from "../flow-control/service.ts";
import { logRoutes } from "../logs/routes.ts";
import { createManagementDomain } from "../management/domain.ts";
import { CancelService } from "../messages/cancel.ts";
import { Retention } from "../messages/retention.ts";
import { messageRoutes, publishRoute } from "../messages/routes.ts";
import { readAccountMessages } from "../messages/store.ts";
import { enqueueRoute, queueRoutes } from "../queues/routes.ts";
import { scheduleRoutes } from "../schedules/routes.ts";
import { signingKeyRoutes } from "../signing/routes.ts";
import { urlGroupRoutes } from "../url-groups/routes.ts";
import type { Parts } from "./domains.ts";

/*
 * One module per domain: what it adds to the APIs, to the test double's reset, to the background
 * services and to what this node follows of other nodes' changes. The composition root lists them.
 */

export function signing({ ctx }: Parts): DomainModule {
  return { routes: { messaging: [signingKeyRoutes(ctx)] } };
}

export function messages({ ctx, storage, engine, domains }: Parts): DomainModule {
  const store = storage.stores.messages;
  const cancels = new CancelService(ctx, store, engine.lifecycle, engine.forget);
  return {
    routes: {
      messaging: [messageRoutes(ctx, domains.publisher, store, cancels)],
      fast: [publishRoute(ctx, domains.publisher)],
    },
    resets: [
      {
        name: "messages",
        // A late answer of a deleted message's attempt must not resurrect it in the log or the DLQ.
        reset: (id) => store.deleteAccount(id).forEach(engine.forget),
        reads: (id) => [readAccountMessages(id)],
      },
    ],
  };
}

export function dlq({ ctx, storage, engine, domains, wake }: Parts): DomainModule {
  const store = storage.stores.dlq;
  const service = new DlqService(ctx, store, engine.lifecycle, wake.ring);
  return {
    routes: { messaging: [dlqRoutes(ctx, store, service, domains.workflows.dlqFields)] },
    resets: [{ name: "dlq", reset: (id) => store.deleteAccount(id) }],
  };
}

export function logs({ ctx, storage }: Parts): DomainModule {
  const store = storage.stores.events;
  return {
    routes: { messaging: [logRoutes(ctx, store)] },
    resets: [{ name: "logs", reset: (id) => store.deleteAccount(id) }],
  };
}

export function urlGroups({ ctx, storage, domains }: Parts): DomainModule {
  return {
    routes: { messaging: [urlGroupRoutes(ctx, domains.groups)] },
    resets: [{ name: "url-groups", reset: (id) => storage.stores.groups.deleteAccount(id) }],
  };
}

export function queues({ ctx, storage, domains }: Parts): DomainModule {
  const { queues, publisher } = domains;
  return {
    routes: { messaging: [queueRoutes(ctx, queues, publisher)], fast: [enqueueRoute(ctx, queues, publisher)] },
    resets: [{ name: "queues", reset: (id) => storage.stores.queues.deleteAccount(id) }],
  };
}

export function schedules({ ctx, domains }: Parts): DomainModule {
  const { schedules, scheduler } = domains;
  return {
    routes: { messaging: [scheduleRoutes(ctx, schedules)] },
    resets: [{ name: "schedules", reset: (id) => schedules.deleteAccount(id) }],
    services: [scheduler],
    // Schedules another node changed are armed here too.
    watches: [["schedules", () => scheduler.rearm()]],
  };
}

export function batch({ ctx, wake, engine, domains }: Parts): DomainModule {
  const { publisher, queues } = domains;
  const service = new BatchService(ctx, publisher, queues, wake.ring, engine.workflowHooks.publishes.isWorkflow);
  return { routes: { messaging: [batchRoutes(ctx, service)] } };
}

export function flowControl({ ctx, storage, wake, engine }: Parts): DomainModule {
  const { pool, flowSettings } = engine;
  const flow = new FlowControlService({
    liveLanes: (filter) => pool.flowStats(filter),
    tellWorkers: (message) => pool.broadcast(message),
    store: storage.stores.flow,
    keys: storage.stores.flowKeys,
    settings: flowSettings,
    lanes: engine.flowLanes,
    global: engine.globalSlots,
    commit: ctx.commit,
    clock: ctx.clock,
  });
  // A key paused, resumed or pinned through another node: this node's workers (the key's owner's) follow.
  const followKeys = () => {
    for (const { lane, steering, resetWindow } of flowSettings.reload())
      pool.broadcast({ type: "flow-steer", key: lane, steering, resetWindow });
    wake.ring();
  };
  return {
    routes: { messaging: [flowControlRoutes(ctx, flow)] },
    resets: [{ name: "flow-control", reset: (id) => flow.forgetAccount(id) }],
    watches: [["flow_keys", followKeys]],
  };
}

export function workflows({ domains }: Parts): DomainModule {
  const { workflows } = domains;
  return {
    routes: { messaging: workflows.routes },
    resets: [{ name: "workflows", reset: (id) => workflows.reset(id) }],
    services: workflows.services,
    // A waiter stored through another node: its deadline may be the earliest (every node arms it; one fires it).
    watches: [["workflow_waiters", workflows.waitersChanged]],
  };
}

/** The web console lives beside the messaging API (main port only): `/` sends browsers there. */
export function webConsole(): DomainModule {
  return { routes: { messaging: [consoleEntryRoutes()] } };
}

export function management({ ctx, storage, usage }: Parts): DomainModule {
  const { stores } = storage;
  const domain = createManagementDomain(ctx, {
    engine: usage,
    dlqCount: (id) => stores.dlq.count(id),
    stores: { search: stores.search, vector: stores.vector, ledger: stores.usageLedger },
  });
  return { routes: { management: domain.managementRoutes, control: domain.controlRoutes } };
}

export function statistics({ usage }: Parts): DomainModule {
  return { resets: [{ name: "statistics", reset: (id) => usage.forget(id) }] };
}

export function dedup({ storage }: Parts): DomainModule {
  return { resets: [{ name: "dedup", reset: (id) => storage.stores.dedup.deleteAccount(id) }] };
}

/**
 * Pruning of the event log, the DLQ and ended workflow runs; where several processes share the
 * storage, only the leader prunes.
 */
export function retention({ ctx, storage, engine }: Parts): DomainModule {
  const { events, dlq } = storage.stores;
  return { services: [new Retention(ctx, events, dlq, [engine.workflowHooks.runs], () => storage.leads?.() ?? true)] };
}
