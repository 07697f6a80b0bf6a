import type { AccountRegistry } from "../accounts/accounts.ts";
import type { Clock } from "../core/clock.ts";
import type { Dialect } from "../core/dialect.ts";
import type { MessageRecord } from "../model/message.ts";
import type { Tracing } from "../model/trace.ts";
import type { Maybe } from "../util/maybe.ts";
import type { InFlightAttempts } from "./in-flight.ts";
import { buildJob } from "./job.ts";
import type { OutcomeRecorder } from "./outcome-recorder.ts";
import type { WorkerPool } from "./pool.ts";
import type { JobFault } from "./worker-protocol.ts";

export interface HandoverDeps {
  clock: Clock;
  config: { region: string };
  dialect: Dialect;
  accounts: AccountRegistry;
  pool: WorkerPool;
  inFlight: InFlightAttempts;
  recorder: OutcomeRecorder;
  /** A body to deliver instead of the stored one (a workflow step carries its run's steps); an engine may read it later. */
  deliveryBody?: (m: MessageRecord) => Maybe<Uint8Array | undefined>;
  /** A fault a test's rule injects into this attempt (the faults domain decides; it goes with the job). */
  fault?: (m: MessageRecord) => JobFault | undefined;
  /** Delivery has not stopped. */
  running: () => boolean;
  /** Each attempt carries svcd's span for it in its `traceparent`. */
  tracing?: Tracing;
}

/**
 * Hands a claimed message to a worker, once its claim is committed: as an attempt in flight, signed
 * for its account, with the body its delivery carries.
 */
export class WorkerHandover {
  /** How a delivery names this server: its dialect's headers and its region. */
  private readonly wire: { dialect: Dialect; region: string };

  constructor(private readonly deps: HandoverDeps) {
    this.wire = { dialect: deps.dialect, region: deps.config.region };
  }

  submit(m: MessageRecord): void {
    const { deps } = this;
    const account = deps.accounts.byId(m.accountId);
    const { ticket } = deps.inFlight.open(m);
    if (!account) {
      // The account left the config: the message can never be signed, so it fails visibly.
      const error = "account no longer configured";
      deps.recorder.add({ ticket, messageId: m.id, error, startedAt: deps.clock.now(), durationMs: 0 });
      return;
    }
    const fault = deps.fault?.(m);
    const trace = deps.tracing?.attemptStarted(m, deps.clock.now());
    const body = deps.deliveryBody?.(m);
    if (!(body instanceof Promise)) return deps.pool.submit(buildJob(m, account, this.wire, ticket, body, fault, trace));
    // Read after the claim (an engine that answers later): the attempt goes once it is read, unless
    // it was disowned (cancelled) or delivery stopped meanwhile (the message stays ACTIVE).
    body.then(
      (read) => {
        if (!deps.running() || !deps.inFlight.peek(ticket)) return;
        deps.pool.submit(buildJob(m, account, this.wire, ticket, read, fault, trace));
      },
      (error) => {
        if (!deps.inFlight.peek(ticket)) return;
        const reason = `the delivery's body could not be read: ${String((error as Error)?.message ?? error)}`;
        deps.recorder.add({ ticket, messageId: m.id, error: reason, startedAt: deps.clock.now(), durationMs: 0 });
      },
    );
  }
}
