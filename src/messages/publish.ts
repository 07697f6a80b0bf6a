import type { Account } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import { newMessageId } from "../core/ids.ts";
import { notFound } from "../core/errors.ts";
import type { Wake } from "../core/wake.ts";
import { MessagingMetric, type UsageRecorder } from "../metrics/usage.ts";
import { ConfigSource } from "./config-source.ts";
import { parsePublishOptions, type PublishOptions } from "./options.ts";
import type { Destination } from "./destination.ts";
import type { ClaimOnInsert, MessageLifecycle } from "./lifecycle.ts";
import type { MessageRecord } from "../model/message.ts";
import type { WriteTx } from "../store/transactor.ts";

/** One delivery address a publish fans out to. */
export interface Target {
  url: string;
  topicName?: string;
  endpointName?: string;
}

/**
 * Resolves a URL Group name to its endpoints and default headers; undefined when unknown. Inside
 * a write (`tx`) or outside one (null: a publish resolves its group before its write).
 */
export type GroupResolver = (
  tx: WriteTx | null,
  account: Account,
  name: string,
) => Promise<{ targets: Target[]; defaults: Headers } | undefined>;

export interface PublishInput {
  account: Account;
  destination: Destination;
  headers: Headers;
  query: URLSearchParams;
  body: Uint8Array;
  callerIp?: string;
  /** Set by the enqueue route; wins over any queue header. */
  queueName?: string;
  scheduleId?: string;
  /** Set by `POST /v2/trigger` (workflows/trigger.ts): a caller without the SDK starts the run. */
  restTrigger?: boolean;
}

export interface PublishedMessage {
  messageId: string;
  url: string;
  deduplicated?: boolean;
}

export interface PublishResult {
  /** 200, or 202 when every message was a duplicate. */
  status: number;
  /** A single object for a URL, an array for a URL Group. */
  body: PublishedMessage | PublishedMessage[];
}

/**
 * Deduplication seam: given the messages about to be stored, returns for each either undefined
 * (store it) or the id of the original it duplicates. Runs inside the publishing write `tx`.
 */
export type Deduplicator = (
  tx: WriteTx,
  messages: MessageRecord[],
  options: PublishOptions,
  nowMs: number,
) => Promise<Array<string | undefined>>;

/**
 * Earliest dispatch time of the stored messages, for the dispatcher's wake: undefined when one
 * waits outside the timeline (parked), Infinity when every one was claimed while being stored.
 */
function earliestDue(messages: MessageRecord[]): number | undefined {
  let min = Infinity;
  let claimed = 0;
  for (const m of messages) {
    if (m.state === "ACTIVE") {
      claimed++;
      continue;
    }
    if (m.dispatchAt === null) return undefined;
    if (m.dispatchAt < min) min = m.dispatchAt;
  }
  if (min === Infinity) return claimed > 0 ? Infinity : undefined;
  return min;
}

export interface PublishDeps {
  lifecycle: MessageLifecycle;
  usage: UsageRecorder;
  /** URL Groups: a group name's endpoints. */
  resolveGroup: GroupResolver;
  /** Deduplication: which of the new messages repeat one seen within the window. */
  deduplicate: Deduplicator;
  /** The dispatcher may claim a message as it is stored, in the same write (Dispatcher.claimOnInsert). */
  claimOnInsert: ClaimOnInsert;
  /** Tells the dispatcher when the earliest new message is due (undefined: look now). */
  wake: Wake;
  /** A layer riding on publishes (workflow runs), inside the storing write. */
  admit?: PublishAdmission;
}

/**
 * A layer riding on publishes (workflow runs). Runs inside the write `tx` that stores a publish,
 * before its messages are stored: it may reshape them, answer for each the id of an earlier
 * message it duplicates (undefined: store it), or refuse the publish by throwing.
 */
export type PublishAdmission = (
  tx: WriteTx,
  input: PublishInput,
  messages: MessageRecord[],
  options: PublishOptions,
  nowMs: number,
) => Promise<Array<string | undefined> | undefined>;

export class PublishService {
  private readonly lifecycle: MessageLifecycle;
  private readonly usage: UsageRecorder;
  private readonly resolveGroup: GroupResolver;
  private readonly deduplicate: Deduplicator;
  private readonly claimOnInsert: ClaimOnInsert;
  private readonly wake: Wake;
  private readonly admit: PublishAdmission | undefined;

  constructor(
    private readonly ctx: AppContext,
    deps: PublishDeps,
  ) {
    this.lifecycle = deps.lifecycle;
    this.usage = deps.usage;
    this.resolveGroup = deps.resolveGroup;
    this.deduplicate = deps.deduplicate;
    this.claimOnInsert = deps.claimOnInsert;
    this.wake = deps.wake;
    this.admit = deps.admit;
  }

  /** Validates, builds and durably stores the messages; resolves only after the commit. */
  async publish(input: PublishInput): Promise<PublishResult> {
    const { messages, options, isGroup } = await this.prepare(null, input);
    const now = this.ctx.clock.now();
    let stored = messages;
    const results = await this.ctx.commit.run((tx) => this.store(tx, (stored = copiesOf(messages)), options, input, now));
    this.wake(earliestDue(stored));
    const allDuplicates = results.every((r) => r.deduplicated);
    return { status: allDuplicates ? 202 : 200, body: isGroup ? results : results[0]! };
  }

  /**
   * Everything short of storing: validation, destination resolution, message records. Inside the
   * write `tx` that stores them, or before it (null).
   */
  async prepare(
    tx: WriteTx | null,
    input: PublishInput,
  ): Promise<{ messages: MessageRecord[]; options: PublishOptions; isGroup: boolean }> {
    const now = this.ctx.clock.now();
    let targets: Target[];
    let defaults: Headers | undefined;
    if (input.destination.kind === "url") targets = [{ url: input.destination.url }];
    else {
      const group = await this.resolveGroup(tx, input.account, input.destination.name);
      if (!group) throw notFound(`URL Group "${input.destination.name}" not found`);
      targets = group.targets;
      defaults = group.defaults;
    }
    const source = new ConfigSource(this.ctx.dialect, input.headers, input.query, defaults);
    const options = parsePublishOptions(source, input.account.limits, now);
    if (input.queueName) options.queueName = input.queueName;
    const messages = targets.map((t) => this.buildMessage(input, options, t, now));
    return { messages, options, isGroup: input.destination.kind === "group" };
  }

  /**
   * Runs inside the write `tx`: stores each message unless it is a duplicate. The records become
   * what their rows say (claimed on insert, joined to a workflow run): each run of the write
   * takes `copiesOf` them, as it may run again (PostgreSQL, after a lock conflict).
   */
  async store(
    tx: WriteTx,
    messages: MessageRecord[],
    options: PublishOptions,
    input: PublishInput,
    now: number,
  ): Promise<PublishedMessage[]> {
    const admitted = this.admit ? await this.admit(tx, input, messages, options, now) : undefined;
    const duplicates = await this.deduplicate(tx, messages, options, now);
    this.usage.countStored(tx, input.account.id, MessagingMetric.requests, 1, now);
    if (input.body.length > 0) this.usage.countStored(tx, input.account.id, MessagingMetric.bandwidth, input.body.length, now);
    const results: PublishedMessage[] = [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      const original = admitted?.[i] ?? duplicates[i];
      if (original) results.push({ messageId: original, url: m.url, deduplicated: true });
      else {
        await this.lifecycle.accept(tx, m, now, this.claimOnInsert);
        results.push({ messageId: m.id, url: m.url });
      }
    }
    return results;
  }

  private buildMessage(input: PublishInput, o: PublishOptions, target: Target, now: number): MessageRecord {
    const notBefore = o.notBefore ?? now + o.delayMs;
    return {
      id: newMessageId(),
      accountId: input.account.id,
      kind: "message",
      state: "CREATED",
      dispatchAt: notBefore,
      notBefore,
      createdAt: now,
      retried: 0,
      maxRetries: o.retries,
      url: target.url,
      method: o.method,
      headers: o.headers,
      body: input.body,
      timeoutMs: o.timeoutMs ?? input.account.limits.maxTimeoutMs,
      retryDelayExpr: o.retryDelayExpr,
      topicName: target.topicName,
      endpointName: target.endpointName,
      queueName: o.queueName,
      scheduleId: input.scheduleId,
      callerIp: input.callerIp,
      labels: o.labels,
      flow: o.flow,
      callback: o.callback,
      failureCallback: o.failureCallback,
      redact: o.redact,
      // A schedule's trigger replays the headers of the request that created it: a trace of its own.
      trace: this.ctx.tracing?.newMessage(input.scheduleId ? undefined : input.headers),
    };
  }
}

/** Records of their own for one run of a write that stores them (see `PublishService.store`). */
export const copiesOf = (messages: readonly MessageRecord[]): MessageRecord[] => messages.map((m) => ({ ...m }));
