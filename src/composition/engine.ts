import type { WriteTx } from "../store/transactor.ts";
import { Dispatcher } from "../delivery/dispatcher.ts";
import { InFlightAttempts } from "../delivery/in-flight.ts";
import { OutcomeRecorder } from "../delivery/outcome-recorder.ts";
import { WorkerPool } from "../delivery/pool.ts";
import { DeliveryProbe } from "../delivery/probe.ts";
import { DeadLetters } from "../dlq/dead-letters.ts";
import { globalSlotsLayout } from "../flow-control/global-slots.ts";
import { FlowLanes } from "../flow-control/lanes.ts";
import { FlowKeySettings, rateWindowListener } from "../flow-control/steering.ts";
import { flowWorkerGreeting } from "../flow-control/worker-greeting.ts";
import { eventLogListener } from "../logs/event-log.ts";
import { MessageLifecycle } from "../messages/lifecycle.ts";
import { messagingUsageListener } from "../messages/usage.ts";
import { MessageEvents, type MessageListener } from "../model/events.ts";
import type { GlobalSlotsLayout } from "../model/flow-control.ts";
import { QueueLanes } from "../queues/lanes.ts";
import { scheduleStatesListener } from "../schedules/states.ts";
import { logDeliveries } from "../telemetry/delivery-log.ts";
import { createWorkflowHooks, type WorkflowHooks } from "../workflows/domain.ts";
import type { Shared } from "./shared.ts";

/** The message engine: the lifecycle every message moves through, and its delivery. */
export interface MessageEngine {
  events: MessageEvents;
  lifecycle: MessageLifecycle;
  /** Queues: what decides on admission whether a new message waits, and lets the next one go. */
  queueLanes: QueueLanes;
  flowSettings: FlowKeySettings;
  flowLanes: FlowLanes;
  globalSlots: GlobalSlotsLayout;
  /** Workflow runs ride on the engine: what their publishes, deliveries and message endings do. */
  workflowHooks: WorkflowHooks;
  inFlight: InFlightAttempts;
  recorder: OutcomeRecorder;
  pool: WorkerPool;
  dispatcher: Dispatcher;
  /** Idle and in-flight checks, as the control plane reads them. */
  probe: DeliveryProbe;
  /** Disowns a message's attempt in flight (cancelled, deleted). */
  forget: (tx: WriteTx, messageId: string) => Promise<void>;
}

type Lifecycle = Pick<MessageEngine, "events" | "lifecycle" | "queueLanes" | "flowSettings" | "workflowHooks">;

/**
 * The message lifecycle. What must move with every message, inside the write that moves it: the
 * event log, usage statistics, queues (the next message goes when one ends), schedules
 * (lastScheduleStates), workflow runs, flow-control rate windows and the accounts' request
 * limits. Queues also decide on admission whether a new message waits.
 */
async function createLifecycle(shared: Shared, extraListeners: MessageListener[]): Promise<Lifecycle> {
  const { ctx, storage, usage, wake, requestLimits } = shared;
  const { stores } = storage;
  const flowSettings = await FlowKeySettings.load(stores.flowKeys);
  const workflowHooks = createWorkflowHooks(ctx, usage, { runs: stores.runs, waits: stores.waits, dlq: stores.dlq });
  const queueLanes = new QueueLanes(stores.queues, ctx.accounts, wake.ring);
  const events = new MessageEvents(ctx.log, [
    eventLogListener(stores.events),
    messagingUsageListener(usage),
    queueLanes.listener,
    scheduleStatesListener(stores.schedules),
    workflowHooks.listener,
    rateWindowListener(flowSettings, stores.flowKeys),
    requestLimits.listener(ctx.accounts),
    ...extraListeners,
  ]);
  logDeliveries(events, ctx.log);
  shared.tracing?.observe(events);
  const lifecycle = new MessageLifecycle({
    store: stores.messages,
    events,
    admit: queueLanes.admit,
    deadLetters: workflowHooks.deadLetters(new DeadLetters(stores.dlq, storage.membership.dlqIds())),
    tracing: ctx.tracing,
  });
  return { events, lifecycle, queueLanes, flowSettings, workflowHooks };
}

/**
 * Delivery: the dispatcher claims due messages (flow control gates each one) and hands them to
 * the workers; the recorder records what each attempt came back with. Every worker learns the
 * flow-control state kept outside it (paused and pinned keys, rate windows, global limits).
 */
export async function createMessageEngine(shared: Shared, extraListeners: MessageListener[]): Promise<MessageEngine> {
  const { ctx, storage, wake } = shared;
  const { config, clock, log, accounts, commit } = ctx;
  const { messages, flow, flowKeys } = storage.stores;
  const parts = await createLifecycle(shared, extraListeners);
  const { lifecycle, flowSettings, workflowHooks } = parts;
  const flowLanes = new FlowLanes(flow, flowSettings, wake.ring);
  const inFlight = new InFlightAttempts();
  const recorder = new OutcomeRecorder({
    ...ctx,
    inFlight,
    claims: messages,
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
  const pool = new WorkerPool({ size: config.workers, onOutcome: recorder.add, log, clock, greeting });
  const dispatcher = new Dispatcher({
    ...ctx,
    store: messages,
    lifecycle,
    pool,
    inFlight,
    recorder,
    gate: flowLanes,
    wakeSignal: wake,
    deliveryBody: workflowHooks.deliveryBody,
    fault: shared.faults.deliveryFault,
  });
  const probe = new DeliveryProbe({ dispatcher, inFlight, recorder, store: messages, commit });
  const forget = (tx: WriteTx, messageId: string) => dispatcher.forget(tx, messageId);
  return { ...parts, flowLanes, globalSlots, inFlight, recorder, pool, dispatcher, probe, forget };
}
