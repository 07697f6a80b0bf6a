import type { RoutePlugin } from "../http/plugin.ts";
import type { Account } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import type { BackgroundService } from "../core/service.ts";
import type { Wake } from "../core/wake.ts";
import type { DeadLetters } from "../dlq/dead-letters.ts";
import type { DlqStorage } from "../dlq/storage.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import type { PublishService } from "../messages/publish.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { UsageRecorder } from "../metrics/usage.ts";
import type { MessageListener } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { WriteTx } from "../store/transactor.ts";
import { refuseNonWorkflowAnswer } from "./answers.ts";
import { workflowDeadLetters } from "./dead-letters.ts";
import { WorkflowDeliveries } from "./deliveries.ts";
import { WorkflowDlq } from "./dlq.ts";
import { workflowDlqRoutes } from "./dlq-routes.ts";
import { NewRuns } from "./new-runs.ts";
import { workflowHeaders } from "./protocol.ts";
import { WorkflowPublishes } from "./publishes.ts";
import { RunEndings, RunSettler, SettleRequests, type RunMessages } from "./run-endings.ts";
import { RunEvents } from "./run-events.ts";
import { WorkflowRerun } from "./rerun.ts";
import { rerunRoutes } from "./rerun-routes.ts";
import { webhookRoutes, workflowRoutes } from "./routes.ts";
import { RunService } from "./runs.ts";
import type { RunStorage, StoredWaiter, WaitStorage } from "./storage.ts";
import { TriggerService } from "./trigger.ts";
import { WaitTimeouts } from "./wait-timeouts.ts";
import { publishTimeout, WaitService } from "./waits.ts";


/**
 * The workflow layer's parts the message engine calls into, built before the engine: what a
 * publish of a run does, what a run's delivery carries, how a run follows its messages.
 */
export function createWorkflowHooks(ctx: AppContext, usage: UsageRecorder, stores: { runs: RunStorage; waits: WaitStorage; dlq: DlqStorage }) {
  const { runs, waits, dlq } = stores;
  const names = workflowHeaders(ctx.dialect);
  const publishes = new WorkflowPublishes(runs, ctx.dialect, usage);
  const deliveries = new WorkflowDeliveries(runs, (id) => ctx.accounts.byId(id)?.limits.maxMessageSize ?? Infinity);
  const endings = new RunEndings(runs, usage, ctx.tracing);
  // Runs that fail inside a delivery's write settle in a write of their own, right after it.
  const settle = new SettleRequests();
  const listener: MessageListener = new RunEvents(runs, dlq, endings, settle);
  return {
    runs,
    waits,
    names,
    publishes,
    deliveryBody: deliveries.bodyFor,
    refuseAnswer: refuseNonWorkflowAnswer(names, runs),
    /** The DLQ as runs use it (one entry per failed run). */
    deadLetters: (inner: DeadLetters) => workflowDeadLetters(inner, runs),
    endings,
    settle,
    listener,
  };
}

export type WorkflowHooks = ReturnType<typeof createWorkflowHooks>;

export interface WorkflowEngine {
  messages: MessageStorage;
  lifecycle: MessageLifecycle;
  /** Disowns a cancelled message's attempt in flight, inside the cancel's write `tx`. */
  forget: (tx: WriteTx, messageId: string) => Promise<void>;
  /** An attempt of the message is under way in this process. */
  inFlight: (messageId: string) => boolean;
  wake: Wake;
  publisher: PublishService;
  dlq: DlqStorage;
  usage: UsageRecorder;
}

/** The workflow layer's services, routes and background work, on top of the message engine. */
export function createWorkflowDomain(ctx: AppContext, hooks: WorkflowHooks, engine: WorkflowEngine) {
  const { runs, waits, names, endings } = hooks;
  const { publisher, lifecycle } = engine;

  const messages: RunMessages = {
    get: (tx, accountId, id) => engine.messages.get(tx, accountId, id),
    // ACTIVE: claimed, by this process or by another one sharing the storage.
    inFlight: (m) => m.state === "ACTIVE" || engine.inFlight(m.id),
    cancel: async (tx: WriteTx, m: MessageRecord, nowMs: number) => {
      if (!(await lifecycle.cancel(tx, m, nowMs))) return false;
      await engine.forget(tx, m.id);
      return true;
    },
    publish: async (tx: WriteTx, account: Account, url: string, headers: Headers, body: Uint8Array, nowMs: number) => {
      const input = { account, destination: { kind: "url" as const, url }, headers, query: new URLSearchParams(), body };
      const plan = await publisher.prepare(tx, input);
      const [published] = await publisher.store(tx, plan.messages, plan.options, input, nowMs);
      tx.afterCommit((committed) => committed && engine.wake());
      return published!.messageId;
    },
  };
  const settler = new RunSettler(runs, waits, messages, ctx.accounts, ctx.commit, ctx.clock, ctx.log);
  hooks.settle.answerWith((work) => settler.schedule(work));

  const timedOut = (tx: WriteTx, account: Account, waiter: StoredWaiter, now: number) =>
    publishTimeout(tx, messages, runs, account, waiter, now);
  const timeouts = new WaitTimeouts(waits, ctx.clock, ctx.commit, ctx.accounts, timedOut, ctx.log);
  const waitService = new WaitService({
    clock: ctx.clock,
    commit: ctx.commit,
    names,
    lowerPrefix: ctx.dialect.lowerPrefix,
    runs,
    waits,
    messages,
    deadlineAdded: timeouts.deadlineAdded,
  });
  const runService = new RunService({
    clock: ctx.clock,
    commit: ctx.commit,
    runs,
    endings,
    settler,
    waits,
  });
  const trigger = new TriggerService(publisher, runs, ctx.dialect, names);
  const dlq = new WorkflowDlq({ ...ctx, names, dlq: engine.dlq, runs, lifecycle, messages, usage: engine.usage, wake: engine.wake });
  const newRuns = new NewRuns({ names, runs, lifecycle, usage: engine.usage });
  const rerun = new WorkflowRerun({ ...ctx, names, runs, logs: runService, newRuns, wake: engine.wake });

  const routes: RoutePlugin[] = [
    workflowRoutes(ctx, { runs: runService, waits: waitService, trigger }),
    workflowDlqRoutes(ctx, dlq, engine.dlq),
    rerunRoutes(ctx, rerun),
    webhookRoutes(ctx.accounts, waitService),
  ];
  /** After delivery started: runs a crash left unsettled settle. */
  const leftovers: BackgroundService = {
    name: "workflow run settler",
    start: () => settler.schedule(),
    stop: () => settler.stop(),
  };
  return {
    routes,
    /** What the routes call, for other front ends of the same operations (the MCP tools). */
    runs: runService,
    waits: waitService,
    rerun,
    /** The workflow fields of a DLQ entry of a run. */
    dlqFields: dlq.fields,
    services: [timeouts, leftovers] as BackgroundService[],
    /** Another process sharing the storage stored a waiter. */
    waitersChanged: timeouts.refresh,
    /** Test-double reset of one account (inside the reset's write `tx`). */
    async reset(tx: WriteTx, accountId: string): Promise<void> {
      await waits.deleteAccount(tx, accountId);
      await runs.deleteAccount(tx, accountId);
    },
  };
}
