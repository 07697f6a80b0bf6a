import type { Elysia } from "elysia";
import type { AppContext } from "./context/app-context.ts";
import { batchRoutes } from "./batch/routes.ts";
import { BatchService } from "./batch/service.ts";
import { FixtureChecker } from "./config/fixture-check.ts";
import { createDeduplicator } from "./dedup/deduplicator.ts";
import { DedupStore } from "./dedup/store.ts";
import { FlowLanes } from "./flow-control/lanes.ts";
import { flowControlRoutes } from "./flow-control/routes.ts";
import { FlowControlService } from "./flow-control/service.ts";
import { FlowStore } from "./flow-control/store.ts";
import type { createMessagingDomain } from "./messages/domain.ts";
import { applyQueueFixtures } from "./queues/fixtures.ts";
import { QueueLanes } from "./queues/lanes.ts";
import { queueRoutes } from "./queues/routes.ts";
import { QueueService } from "./queues/service.ts";
import { QueueStore } from "./queues/store.ts";
import { applyScheduleFixtures } from "./schedules/fixtures.ts";
import { scheduleRoutes } from "./schedules/routes.ts";
import { Scheduler } from "./schedules/scheduler.ts";
import { ScheduleService } from "./schedules/service.ts";
import { ScheduleStates } from "./schedules/states.ts";
import { ScheduleStore } from "./schedules/store.ts";
import { applyUrlGroupFixtures } from "./url-groups/fixtures.ts";
import { urlGroupRoutes } from "./url-groups/routes.ts";
import { UrlGroupService } from "./url-groups/service.ts";
import { UrlGroupStore } from "./url-groups/store.ts";

type MessagingDomain = ReturnType<typeof createMessagingDomain>;
type Plugin = Elysia<any, any, any, any, any, any, any>;

/**
 * URL Groups, deduplication, queues, flow control, schedules and batch, plugged into the messaging
 * engine's seams: the publisher's group resolver and deduplicator, the lifecycle's hooks and the
 * dispatcher's gate. Config fixtures are applied here (a bad one throws a ConfigError).
 */
export function createGroupsSchedulesQueues(ctx: AppContext, messaging: MessagingDomain) {
  const { publisher, lifecycle, dispatcher, pool } = messaging;
  const messages = messaging.stores.messages;
  const wake = () => dispatcher.wake();

  const groupStore = new UrlGroupStore(ctx.db);
  const groups = new UrlGroupService(groupStore);
  publisher.resolveGroup = groups.resolve;

  const dedupStore = new DedupStore(ctx.db);
  publisher.deduplicate = createDeduplicator(dedupStore);

  const queueStore = new QueueStore(ctx.db);
  const queueLanes = new QueueLanes(queueStore, messages, ctx.accounts, wake);
  lifecycle.hooks.push(queueLanes);
  const queues = new QueueService(queueStore, queueLanes, messages, lifecycle, (id) => dispatcher.forget(id));

  const flowStore = new FlowStore(ctx.db);
  const flowLanes = new FlowLanes(flowStore, messages, wake);
  dispatcher.gate = flowLanes;
  const flow = new FlowControlService(pool, flowStore, ctx.clock);

  const scheduleStore = new ScheduleStore(ctx.db);
  const scheduler = new Scheduler(ctx, scheduleStore, publisher, wake);
  const schedules = new ScheduleService(ctx, scheduleStore, publisher, queues, scheduler);
  lifecycle.hooks.push(new ScheduleStates(scheduleStore));

  const batch = new BatchService(ctx, publisher, queues, wake);

  // Queues and groups first: schedules may publish to them.
  const check = new FixtureChecker(ctx.config.configFile);
  const now = ctx.clock.now();
  try {
    ctx.db.transaction(() => {
      ctx.accounts.all().forEach((account, i) => {
        const base = `accounts[${i}]`;
        applyQueueFixtures(account, base, queues, check, now);
        applyUrlGroupFixtures(account, base, groups, check, now);
        applyScheduleFixtures(account, base, { schedules, store: scheduleStore, dialect: ctx.dialect }, check, now);
      });
    })();
  } catch (error) {
    // The server will not start: its delivery threads must not outlive the failed construction.
    void pool.close();
    throw error;
  }

  messaging.onStarted(() => {
    const released = flowLanes.recover(ctx.clock.now());
    if (released > 0) ctx.log.info("released messages held by flow control at the last stop", { count: released });
    scheduler.start();
    wake();
  });

  const routes: Plugin[] = [
    urlGroupRoutes(ctx, groups),
    queueRoutes(ctx, queues, publisher),
    scheduleRoutes(ctx, schedules),
    batchRoutes(ctx, batch),
    flowControlRoutes(ctx, flow),
  ];
  return {
    routes,
    stop: () => scheduler.stop(),
    /** How each part forgets one account (for a test-double reset; run inside its transaction). */
    resets: [
      { name: "url-groups", reset: (accountId: string) => groupStore.deleteAccount(accountId) },
      { name: "queues", reset: (accountId: string) => queueStore.deleteAccount(accountId) },
      { name: "schedules", reset: (accountId: string) => schedules.deleteAccount(accountId) },
      { name: "dedup", reset: (accountId: string) => dedupStore.deleteAccount(accountId) },
    ],
  };
}
