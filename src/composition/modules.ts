import { batchRoutes } from "../batch/routes.ts";
import { BatchService } from "../batch/service.ts";
import { consoleEntryRoutes } from "../console/routes.ts";
import type { DomainModule } from "../context/domain-module.ts";
import { controlActions, controlRoutes, type ControlDeps } from "../control/routes.ts";
import { dlqRoutes } from "../dlq/routes.ts";
import { flowControlRoutes } from "../flow-control/routes.ts";
import { logRoutes } from "../logs/routes.ts";
import { createManagementDomain } from "../management/domain.ts";
import { mcpRoutes } from "../mcp/routes.ts";
import { CancelService } from "../messages/cancel.ts";
import { Retention } from "../messages/retention.ts";
import { messageRoutes, publishRoute } from "../messages/routes.ts";
import { enqueueRoute, queueRoutes } from "../queues/routes.ts";
import { scheduleRoutes } from "../schedules/routes.ts";
import { signingKeyRoutes } from "../signing/routes.ts";
import { buildInfo } from "../startup/build-info.ts";
import { urlGroupRoutes } from "../url-groups/routes.ts";
import type { ComposedModule, Parts } from "./domains.ts";

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
        reset: async (tx, id) => {
          for (const messageId of await store.deleteAccount(tx, id)) await engine.forget(tx, messageId);
        },
      },
    ],
  };
}

export function dlq({ ctx, storage, domains }: Parts): DomainModule {
  const store = storage.stores.dlq;
  return {
    routes: { messaging: [dlqRoutes(ctx, store, domains.dlq, domains.workflows.dlqFields)] },
    resets: [{ name: "dlq", reset: (tx, id) => store.deleteAccount(tx, id) }],
  };
}

export function logs({ ctx, storage }: Parts): DomainModule {
  const store = storage.stores.events;
  return {
    routes: { messaging: [logRoutes(ctx, store)] },
    resets: [{ name: "logs", reset: (tx, id) => store.deleteAccount(tx, id) }],
  };
}

export function urlGroups({ ctx, storage, domains }: Parts): DomainModule {
  return {
    routes: { messaging: [urlGroupRoutes(ctx, domains.groups)] },
    resets: [{ name: "url-groups", reset: (tx, id) => storage.stores.groups.deleteAccount(tx, id) }],
  };
}

export function queues({ ctx, storage, domains }: Parts): DomainModule {
  const { queues, publisher } = domains;
  return {
    routes: { messaging: [queueRoutes(ctx, queues, publisher)], fast: [enqueueRoute(ctx, queues, publisher)] },
    resets: [{ name: "queues", reset: (tx, id) => storage.stores.queues.deleteAccount(tx, id) }],
  };
}

export function schedules({ ctx, domains }: Parts): DomainModule {
  const { schedules, scheduler } = domains;
  return {
    routes: { messaging: [scheduleRoutes(ctx, schedules)] },
    resets: [{ name: "schedules", reset: (tx, id) => schedules.deleteAccount(tx, id) }],
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

export function flowControl({ ctx, wake, engine, domains }: Parts): DomainModule {
  const { pool, flowSettings } = engine;
  const { flow } = domains;
  // A key paused, resumed or pinned through another node: this node's workers (the key's owner's) follow.
  const followKeys = async () => {
    const changes = await flowSettings.reload();
    for (const { lane, steering, resetWindow } of changes) pool.broadcast({ type: "flow-steer", key: lane, steering, resetWindow });
    wake.ring();
    flow.followRemoteChanges(changes).catch((error) =>
      ctx.log.warn("releasing held messages of a key changed on another node failed", { error: String(error) }),
    );
  };
  return {
    routes: { messaging: [flowControlRoutes(ctx, flow)] },
    resets: [{ name: "flow-control", reset: (tx, id) => flow.forgetAccount(tx, id) }],
    watches: [["flow_keys", followKeys]],
  };
}

export function workflows({ domains }: Parts): DomainModule {
  const { workflows } = domains;
  return {
    routes: { messaging: workflows.routes },
    resets: [{ name: "workflows", reset: (tx, id) => workflows.reset(tx, id) }],
    services: workflows.services,
    // A waiter stored through another node: its deadline may be the earliest (every node arms it; one fires it).
    watches: [["workflow_waiters", workflows.waitersChanged]],
  };
}

/** Agents' door to the same services: the MCP tools call what the routes of the domains above call. */
export function mcp({ ctx, storage, domains }: Parts): ComposedModule {
  const { stores } = storage;
  const { workflows } = domains;
  const deps = {
    ctx,
    publisher: domains.publisher,
    messages: stores.messages,
    events: stores.events,
    dlqStore: stores.dlq,
    dlq: domains.dlq,
    dlqFields: workflows.dlqFields,
    queues: domains.queues,
    schedules: domains.schedules,
    flow: domains.flow,
    runs: workflows.runs,
    waits: workflows.waits,
    rerun: workflows.rerun,
  };
  const version = buildInfo().version;
  const routes = (controls: ControlDeps) => mcpRoutes(ctx, { ...deps, control: controlActions(controls) }, version);
  return { controlled: (controls) => ({ messaging: [routes(controls)] }) };
}

/** The web console lives beside the messaging API (main port only): `/` sends browsers there. */
export function webConsole(): DomainModule {
  return { routes: { messaging: [consoleEntryRoutes()] } };
}

export async function management({ ctx, storage, usage }: Parts): Promise<DomainModule> {
  const { stores } = storage;
  const domain = await createManagementDomain(ctx, {
    engine: usage,
    dlqCount: (id) => stores.dlq.count(id),
    stores: { search: stores.search, vector: stores.vector, ledger: stores.usageLedger },
  });
  return { routes: { management: domain.managementRoutes, control: domain.controlRoutes } };
}

/** The test double's controls under `/__svc/`: reset of the caller's account, flush and time control. */
export function controls({ ctx }: Parts): ComposedModule {
  return { controlled: (controls) => ({ control: [controlRoutes(ctx, controls)] }) };
}

/**
 * Fault injection: the rules' control routes and their part of the reset. The hooks the dispatcher,
 * the HTTP app and the metrics ask are shared (Shared.faults): the engine is built before any module.
 */
export function faults({ faults }: Parts): DomainModule {
  return { routes: { control: [faults.routes] }, resets: [faults.resetPart], watches: [faults.watch] };
}

export function statistics({ usage }: Parts): DomainModule {
  return { resets: [{ name: "statistics", reset: (tx, id) => usage.forget(tx, id) }] };
}

export function dedup({ storage }: Parts): DomainModule {
  return { resets: [{ name: "dedup", reset: (tx, id) => storage.stores.dedup.deleteAccount(tx, id) }] };
}

/**
 * Pruning of the event log, the DLQ and ended workflow runs; where several processes share the
 * storage, only the leader prunes.
 */
export function retention({ ctx, storage, engine }: Parts): DomainModule {
  const { events, dlq } = storage.stores;
  return { services: [new Retention(ctx, events, dlq, [engine.workflowHooks.runs], () => storage.membership.leads())] };
}
