import type { AppContext } from "../context/app-context.ts";
import { Dispatcher } from "../delivery/dispatcher.ts";
import { WorkerPool } from "../delivery/pool.ts";
import { dlqRoutes } from "../dlq/routes.ts";
import { DlqService } from "../dlq/service.ts";
import { DlqStore } from "../dlq/store.ts";
import { logRoutes } from "../logs/routes.ts";
import { EventStore } from "../logs/store.ts";
import type { UsageRecorder } from "../metrics/usage.ts";
import { CancelService } from "./cancel.ts";
import { MessageLifecycle } from "./lifecycle.ts";
import { PublishService } from "./publish.ts";
import { Retention } from "./retention.ts";
import { messageRoutes } from "./routes.ts";
import { MessageStore } from "./store.ts";

/** Wires the messaging engine: stores, lifecycle, workers, dispatcher, services and routes. */
export function createMessagingDomain(ctx: AppContext, metrics: UsageRecorder) {
  const messages = new MessageStore(ctx.db);
  const events = new EventStore(ctx.db);
  const dlq = new DlqStore(ctx.db);
  const lifecycle = new MessageLifecycle(messages, events, dlq, metrics);
  let dispatcher: Dispatcher | undefined;
  const pool = new WorkerPool(
    ctx.config.workers,
    (o) => dispatcher!.onOutcome(o),
    ctx.log,
    () => ctx.clock.now(),
    ctx.clock.kind === "manual",
  );
  dispatcher = new Dispatcher(ctx, messages, lifecycle, pool);
  const wake = (dueAt?: number) => dispatcher!.wake(dueAt);
  const publisher = new PublishService(ctx, lifecycle, metrics, wake);
  publisher.claimNow = (m, nowMs) => dispatcher!.claimStored(m, nowMs);
  const cancels = new CancelService(ctx, messages, lifecycle, dispatcher);
  const dlqService = new DlqService(ctx, dlq, lifecycle, wake);
  const retention = new Retention(ctx, events, dlq);
  ctx.clock.onAdvance((nowMs) => pool.broadcast({ type: "clock", nowMs }));
  /** Work that must wait until delivery runs: after recovery, so it never races it. */
  const startedHooks: Array<() => void> = [];

  return {
    stores: { messages, events, dlq },
    lifecycle,
    retention,
    pool,
    dispatcher,
    publisher,
    /** Runs `fn` once start() has recovered the previous run and delivery is running. */
    onStarted(fn: () => void) {
      startedHooks.push(fn);
    },
    routes: [messageRoutes(ctx, publisher, messages, cancels), dlqRoutes(ctx, dlq, dlqService), logRoutes(ctx, events)],
    /** Workers answer, in-flight messages of a previous run are due again, delivery starts. */
    async start() {
      await pool.ping();
      const recovered = dispatcher.recover();
      if (recovered > 0) ctx.log.info("re-delivering messages that were in flight at the last stop", { count: recovered });
      dispatcher.wake();
      retention.start();
      for (const fn of startedHooks) fn();
    },
    /** Stops dispatching, lets in-flight attempts finish until the deadline, records their outcomes. */
    async drain(deadlineMs: number) {
      dispatcher.stop();
      pool.releaseWaiting();
      retention.stop();
      const deadline = Date.now() + deadlineMs;
      while (pool.inFlight > 0 && Date.now() < deadline) await Bun.sleep(10);
      await pool.close();
      dispatcher.flushOutcomes();
    },
  };
}
