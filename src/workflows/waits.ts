import type { Account } from "../accounts/accounts.ts";
import { badRequest, HttpError } from "../core/errors.ts";
import { headerMap } from "../messages/views.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";
import { toBase64 } from "../util/base64.ts";
import { DurationError, parseSecondsOrDuration } from "../util/duration.ts";
import { headersOf } from "./headers.ts";
import type { Waiter } from "./model.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import { bytesOf } from "./raw-steps.ts";
import type { RunMessages } from "./run-endings.ts";
import { isActive } from "./run-state.ts";
import type { RunStorage, StoredWaiter, WaitStorage } from "./storage.ts";

/** What `POST /v2/wait/{eventId}` sends (the SDK's `WaitRequest`). */
export interface WaitRequest {
  url: string;
  timeout?: string | number;
  timeoutUrl?: string;
  timeoutBody?: string;
  timeoutHeaders?: Record<string, string[]>;
  step: Record<string, unknown>;
}

/** One waiter a notification reached (the SDK's `NotifyResponse`, with the run it resumed). */
export interface NotifyResult {
  waiter: ReturnType<typeof waiterView>;
  messageId: string;
  error: string;
  workflowRunId: string;
  workflowCreatedAt?: number;
}

const DEFAULT_TIMEOUT = "7d";

/** Inside the write `tx`: the deadline passed without the event; the waiting step learns it timed out. */
export async function publishTimeout(
  tx: WriteTx,
  messages: RunMessages,
  runs: RunStorage,
  account: Account,
  waiter: StoredWaiter,
  nowMs: number,
): Promise<void> {
  const step = { ...waiter.step, waitEventId: waiter.eventId, timeout: waiter.timeout, waitTimeout: true };
  try {
    const body = bytesOf(JSON.stringify(step));
    const messageId = await messages.publish(tx, account, waiter.timeoutUrl, headersOf(waiter.headers), body, nowMs);
    await runs.setDetails(tx, account.id, waiter.runId, messageId, { waitTimeoutDeadline: waiter.deadline });
  } catch (error) {
    // The run ended meanwhile: nobody waits for the timeout.
    if (!(error instanceof HttpError)) throw error;
  }
}

/** A waiter as `GET /v2/waiters/{eventId}` and notify answers show it (deadline in Unix seconds). */
export function waiterView(w: Waiter) {
  return {
    url: w.url,
    deadline: Math.floor(w.deadline / 1000),
    headers: headerMap(w.headers),
    timeoutUrl: w.timeoutUrl,
    timeoutBody: w.timeoutBody,
    timeoutHeaders: w.timeoutHeaders,
  };
}

export interface WaitDeps {
  clock: { now(): number };
  commit: Pick<Transactor, "run">;
  names: WorkflowHeaderNames;
  lowerPrefix: string;
  runs: RunStorage;
  waits: WaitStorage;
  messages: RunMessages;
  /** A waiter with this deadline was stored: its timeout must fire then. */
  deadlineAdded: (deadlineMs: number) => void;
}

/**
 * `context.waitForEvent` / `waitForWebhook` and notifications: a waiting step is stored until its
 * event comes (then the event is the run's next step) or its deadline passes (then a step saying
 * it timed out is). An event notified to one run before that run waits for it is kept, and its
 * wait takes it at once.
 */
export class WaitService {
  constructor(private readonly deps: WaitDeps) {}

  async wait(account: Account, eventId: string, request: WaitRequest, headers: Headers): Promise<void> {
    const { names, runs, waits, clock, commit } = this.deps;
    const runId = headers.get(names.runId);
    if (!runId) throw badRequest(`a wait needs the ${names.runId} header of the waiting run`);
    if (typeof request.url !== "string" || typeof request.step !== "object" || request.step === null)
      throw badRequest("invalid wait: needs url and step");
    const timeout = request.timeout === undefined ? DEFAULT_TIMEOUT : String(request.timeout);
    let timeoutMs: number;
    try {
      timeoutMs = parseSecondsOrDuration(timeout);
    } catch (error) {
      if (error instanceof DurationError) throw badRequest(`invalid wait timeout "${timeout}": ${error.message}`);
      throw error;
    }
    const deadline = await commit.run(async (tx) => {
      const run = await runs.getRun(tx, account.id, runId);
      if (!run || !isActive(run.state)) throw new HttpError(400, `workflow run ${runId} is not running`);
      const now = clock.now();
      const waiter: Waiter = {
        accountId: account.id,
        runId,
        eventId,
        url: request.url,
        createdAt: now,
        deadline: now + timeoutMs,
        headers: this.protocolHeaders(headers),
        timeoutUrl: request.timeoutUrl ?? request.url,
        timeoutBody: request.timeoutBody,
        timeoutHeaders: request.timeoutHeaders ?? {},
        timeout,
        step: request.step,
      };
      const kept = await waits.takeKept(tx, account.id, runId, eventId);
      if (kept) {
        await this.publishEvent(tx, account, waiter, kept, now);
        return undefined;
      }
      await waits.insert(tx, waiter);
      return waiter.deadline;
    });
    if (deadline !== undefined) this.deps.deadlineAdded(deadline);
  }

  /**
   * Hands `data` to every step waiting for `eventId` (only the run's when `runId` is given). Given a
   * run that does not wait yet, the event is kept for its wait.
   */
  async notify(account: Account, eventId: string, data: Uint8Array, runId?: string): Promise<NotifyResult[]> {
    const { runs, waits, clock, commit } = this.deps;
    return commit.run(async (tx) => {
      const now = clock.now();
      const results: NotifyResult[] = [];
      for (const waiter of await waits.waiting(tx, account.id, eventId, runId)) {
        if (!(await waits.delete(tx, waiter.id))) continue;
        const workflowCreatedAt = (await runs.getRun(tx, account.id, waiter.runId))?.createdAt;
        const run = { workflowRunId: waiter.runId, workflowCreatedAt };
        try {
          const messageId = await this.publishEvent(tx, account, waiter, data, now);
          results.push({ waiter: waiterView(waiter), messageId, error: "", ...run });
        } catch (error) {
          if (!(error instanceof HttpError)) throw error;
          results.push({ waiter: waiterView(waiter), messageId: "", error: error.message, ...run });
        }
      }
      if (results.length === 0 && runId !== undefined) {
        const run = await runs.getRun(tx, account.id, runId);
        if (run && isActive(run.state)) await waits.keep(tx, account.id, runId, eventId, data, now);
      }
      return results;
    });
  }

  async waiters(account: Account, eventId: string) {
    return (await this.deps.waits.readWaiting(account.id, eventId)).map(waiterView);
  }

  private async publishEvent(
    tx: WriteTx,
    account: Account,
    waiter: Waiter,
    data: Uint8Array,
    nowMs: number,
  ): Promise<string> {
    const step = { ...waiter.step, waitEventId: waiter.eventId, timeout: waiter.timeout, out: toBase64(data), waitTimeout: false };
    const body = bytesOf(JSON.stringify(step));
    const messageId = await this.deps.messages.publish(tx, account, waiter.url, headersOf(waiter.headers), body, nowMs);
    await this.deps.runs.setDetails(tx, account.id, waiter.runId, messageId, { waitTimeoutDeadline: waiter.deadline });
    return messageId;
  }

  /** The waiting step's protocol headers (never its credentials): the event is published with them. */
  private protocolHeaders(headers: Headers): Array<[string, string]> {
    const kept: Array<[string, string]> = [];
    headers.forEach((value, name) => {
      const lower = name.toLowerCase();
      if (lower.startsWith(this.deps.lowerPrefix) || lower === "content-type") kept.push([name, value]);
    });
    return kept;
  }
}
