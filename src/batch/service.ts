import { Type, type Static } from "@sinclair/typebox";
import type { Account } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import { badRequest, HttpError, quotaExceeded } from "../core/errors.ts";
import { firstProblem } from "../core/validation.ts";
import type { Wake } from "../core/wake.ts";
import { parseDestination } from "../messages/destination.ts";
import { checkName } from "../messages/options.ts";
import { copiesOf, type PublishedMessage, type PublishInput, type PublishService } from "../messages/publish.ts";
import type { QueueService } from "../queues/service.ts";
import { headerPairs, toHeaders } from "../util/header-pairs.ts";

export const MAX_BATCH = 1000;

export const BatchElement = Type.Object({
  destination: Type.String({ minLength: 1 }),
  headers: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
  // A JSON value that is not a string (the workflow SDK sends a context.call's object body so) is
  // sent as its JSON text.
  body: Type.Optional(Type.Unknown()),
  queue: Type.Optional(Type.String()),
});
type BatchElement = Static<typeof BatchElement>;

/** One answer per element: a message, a group's messages, or why the element was refused. */
export type BatchAnswer = PublishedMessage | PublishedMessage[] | { error: string };

type Prepared =
  | { ok: true; input: PublishInput; plan: Awaited<ReturnType<PublishService["prepare"]>>; allOrNothing: boolean }
  | { ok: false; error: HttpError; allOrNothing: boolean };

/**
 * `POST /v2/batch`: each element is validated on its own (a bad one answers `{"error"}` while the
 * others go through); the valid ones are stored in one group commit, each in its own savepoint.
 * Storage that fails (503) fails the request: a 200 says that every element it answers for is stored.
 * An element `allOrNothing` picks (a workflow run's message: the SDK reads only the request's
 * status) refuses the whole request instead.
 */
export class BatchService {
  constructor(
    private readonly ctx: AppContext,
    private readonly publisher: PublishService,
    private readonly queues: QueueService,
    private readonly wake: Wake,
    private readonly allOrNothing: (headers: Headers) => boolean = () => false,
  ) {}

  async publish(account: Account, elements: unknown[], callerIp: string | undefined): Promise<BatchAnswer[]> {
    if (elements.length > MAX_BATCH) throw badRequest(`invalid batch: at most ${MAX_BATCH} messages per request`);
    const prepared = await Promise.all(elements.map((element, i) => this.prepare(account, element, i, callerIp)));
    const refused = prepared.find((p) => !p.ok && p.allOrNothing);
    if (refused && !refused.ok) throw refused.error;
    const now = this.ctx.clock.now();
    const answers = await Promise.all(
      prepared.map(async (p): Promise<BatchAnswer> => {
        if (!p.ok) return { error: p.error.message };
        try {
          const { messages, options } = p.plan;
          const stored = await this.ctx.commit.run((tx) => this.publisher.store(tx, copiesOf(messages), options, p.input, now));
          return p.plan.isGroup ? stored : stored[0]!;
        } catch (error) {
          // A refused element answers in its place; storage that failed answers for the whole
          // request (503), never a 200 that a client would take for messages stored.
          if (error instanceof HttpError && error.status !== 503 && !p.allOrNothing) return { error: error.message };
          throw error;
        }
      }),
    );
    this.wake();
    return answers;
  }

  private async prepare(account: Account, element: unknown, i: number, callerIp?: string): Promise<Prepared> {
    const allOrNothing = this.picksAllOrNothing(element);
    try {
      const problem = firstProblem(BatchElement, element, `batch[${i}]`);
      if (problem) throw badRequest(problem);
      const e = element as BatchElement;
      const { destination, query } = parseDestination(e.destination, this.ctx.dialect);
      const body = new TextEncoder().encode(typeof e.body === "string" ? e.body : e.body === undefined ? "" : JSON.stringify(e.body));
      if (body.length > account.limits.maxMessageSize)
        throw quotaExceeded(`message body too large: the plan allows at most ${account.limits.maxMessageSize} bytes`);
      const queueName = e.queue === undefined ? undefined : checkName(e.queue, "queue");
      if (queueName) await this.queues.checkCanUse(null, account, queueName);
      const input: PublishInput = {
        account,
        destination,
        headers: toHeaders(headerPairs(e.headers, `batch element ${i} headers`)),
        query,
        body,
        callerIp,
        queueName,
      };
      return { ok: true, input, plan: await this.publisher.prepare(null, input), allOrNothing };
    } catch (error) {
      if (error instanceof HttpError) return { ok: false, error, allOrNothing };
      throw error;
    }
  }

  private picksAllOrNothing(element: unknown): boolean {
    const headers = (element as { headers?: unknown } | null)?.headers;
    if (typeof headers !== "object" || headers === null) return false;
    try {
      return this.allOrNothing(toHeaders(headerPairs(headers, "batch element headers")));
    } catch {
      return false;
    }
  }
}
