import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import { badRequest, notFound } from "../core/errors.ts";
import type { Wake } from "../core/wake.ts";
import type { DlqEntry } from "../dlq/model.ts";
import { dlqView } from "../dlq/routes.ts";
import type { DlqStorage } from "../dlq/storage.ts";
import { takePage, type BulkSelection } from "../filters/bulk.ts";
import { callbackMessage } from "../messages/callbacks.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import { compact } from "../messages/views.ts";
import type { UsageRecorder } from "../metrics/usage.ts";
import { childOf } from "../model/trace.ts";
import { readOverrides, type Overrides } from "./dlq-overrides.ts";
import type { RunRecord } from "./model.ts";
import { NewRuns, type StartedRun } from "./new-runs.ts";
import type { RunMessages } from "./run-endings.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import type { RunStorage } from "./storage.ts";
import { andThen, type Maybe } from "../util/maybe.ts";

export interface WorkflowDlqDeps {
  clock: { now(): number };
  commit: { run<T>(write: () => T): Promise<T> };
  dialect: Dialect;
  names: WorkflowHeaderNames;
  dlq: DlqStorage;
  runs: RunStorage;
  lifecycle: MessageLifecycle;
  /** Messages of runs: the failure function's call under way is cancelled through them. */
  messages: Pick<RunMessages, "get" | "cancel">;
  usage: UsageRecorder;
  wake: Wake;
}

type Action = "resume" | "restart";

/**
 * The DLQ of workflow runs: a failed run's entry can resume it (a new run with the steps that had
 * succeeded, delivering the failed step again), restart it (a new run from the initial payload),
 * call its failure function again, or be deleted. A request may override the new run's settings
 * (dlq-overrides.ts) and name its id (`<Prefix>-Workflow-RunId`).
 */
export class WorkflowDlq {
  private readonly newRuns: NewRuns;

  constructor(private readonly deps: WorkflowDlqDeps) {
    this.newRuns = new NewRuns(deps);
  }

  /** The run a DLQ entry failed (not a call's or a failure function's entry: those have none). */
  private runOf(e: DlqEntry): string | undefined {
    const tag = e.message.workflow;
    return tag && tag.callType !== "failureCall" && tag.callType !== "toCallback" ? tag.runId : undefined;
  }

  /** The workflow fields a DLQ entry of a run shows (the SDK's `DLQMessage`). */
  readonly fields = (e: DlqEntry): Maybe<Record<string, unknown> | undefined> => {
    const runId = this.runOf(e);
    if (runId === undefined) return undefined;
    return andThen(this.deps.runs.readRun(e.message.accountId, runId), (run) => {
      const failure = run?.failureFunction?.dlqId === e.dlqId ? run.failureFunction : undefined;
      return compact({
        workflowRunId: runId,
        workflowUrl: run?.url ?? e.message.url,
        workflowCreatedAt: run?.createdAt ?? e.workflowCreatedAt,
        failureCallback: e.message.failureCallback?.url,
        failureFunctionState: failure?.state ?? e.failureFunctionState,
        failureCallbackInfo: failure
          ? compact({
              state: failure.state,
              responseStatus: failure.responseStatus,
              responseBody: failure.responseBody,
              responseHeaders: failure.responseHeaders,
            })
          : undefined,
      });
    });
  };

  /** A failed run's entry (`GET /v2/workflows/dlq/{dlqId}`): 404 for any other. */
  async get(account: Account, dlqId: string) {
    const entry = await this.deps.dlq.read(account.id, dlqId);
    const fields = entry && (await this.fields(entry));
    if (!entry || !fields) throw notFound(`workflow DLQ message ${dlqId} not found`);
    return { ...dlqView(entry), ...fields };
  }

  /** Deletes a failed run's entry (`DELETE /v2/workflows/dlq/{dlqId}`). */
  async deleteOne(account: Account, dlqId: string): Promise<void> {
    const { commit, dlq } = this.deps;
    const deleted = await commit.run(() => {
      const entry = dlq.get(account.id, dlqId);
      return entry !== undefined && this.runOf(entry) !== undefined && dlq.delete(account.id, dlqId);
    });
    if (!deleted) throw notFound(`workflow DLQ message ${dlqId} not found`);
  }

  /** Resumes or restarts the runs of the selected entries (found first; the write acts on those still there); they leave the DLQ. */
  async act(action: Action, account: Account, selection: BulkSelection, headers: Headers): Promise<{ workflowRuns: StartedRun[]; cursor?: string }> {
    const { commit, clock, dlq } = this.deps;
    const overrides = readOverrides(this.deps.dialect, this.deps.names.runId, account, headers, clock.now());
    const found = await dlq.readOldest(account.id, this.workflowOnly(selection), selection.after, selection.count + 1);
    const { page, cursor } = takePage(found, selection.count, (e) => e.seq);
    const dlqIds = page.map((e) => e.dlqId);
    const runIds = page.flatMap((e) => this.runOf(e) ?? []);
    if (overrides.runId !== undefined) runIds.push(overrides.runId);
    const runs = await commit.run(() => {
      const now = clock.now();
      return dlqIds.flatMap((dlqId) => {
        const entry = dlq.get(account.id, dlqId);
        if (!entry) return [];
        const run = action === "resume" ? this.resume(entry, overrides, now) : this.restart(entry, overrides, now);
        dlq.delete(account.id, entry.dlqId);
        return [{ workflowRunId: run.runId, workflowCreatedAt: run.createdAt }];
      });
    });
    this.deps.wake();
    return compact({ workflowRuns: runs, cursor });
  }

  /** One entry (`/resume/{dlqId}`): 404 when it is not a failed run's entry. */
  async actOn(action: Action, account: Account, dlqId: string, headers: Headers): Promise<StartedRun> {
    const { workflowRuns } = await this.act(action, account, { filter: { dlqIds: [dlqId] }, count: 1, after: null }, headers);
    if (!workflowRuns[0]) throw notFound(`workflow DLQ message ${dlqId} not found`);
    return workflowRuns[0];
  }

  /**
   * Calls the failed run's failure function again, with the answer its step failed with. Only a
   * failure function whose call failed is called again (as the hosted service does): one that
   * succeeded, is under way or was cancelled is refused with 400.
   */
  async retryFailureFunction(account: Account, dlqId: string): Promise<StartedRun> {
    const { commit, clock, dlq, runs, lifecycle } = this.deps;
    // The entry names its run: both are read again, locked, by the write.
    const found = await dlq.read(account.id, dlqId);
    const runId = found?.message.workflow?.runId;
    if (!found || runId === undefined) throw notFound(`workflow DLQ message ${dlqId} not found`);
    const run = await commit.run(() => {
      const entry = dlq.get(account.id, dlqId);
      const run = entry && runs.getRun(account.id, runId);
      if (!entry || !run) throw notFound(`workflow DLQ message ${dlqId} not found`);
      const spec = entry.message.failureCallback;
      const state = run.failureFunction?.dlqId === dlqId ? run.failureFunction.state : undefined;
      if (!spec || !state) throw badRequest(`workflow run ${run.runId} has no failure function`);
      if (state !== "CALLBACK_FAIL")
        throw badRequest(`the failure function of workflow run ${run.runId} did not fail (${state}): only a failed one is called again`);
      const now = clock.now();
      const outcome = {
        ticket: 0,
        messageId: entry.message.id,
        status: entry.responseStatus,
        headers: entry.responseHeaders,
        body: entry.responseBody,
        error: entry.error,
        startedAt: now,
        durationMs: 0,
      };
      const trace = entry.message.trace && childOf(entry.message.trace);
      lifecycle.accept(callbackMessage(entry.message, spec, "failure-callback", outcome, now, dlqId, trace), now);
      return run;
    });
    this.deps.wake();
    return { workflowRunId: run.runId, workflowCreatedAt: run.createdAt };
  }

  /**
   * Cancels the failure function's call under way (`DELETE /v2/workflows/dlq/callback/{dlqId}`): its
   * message is cancelled and the entry shows `CALLBACK_CANCELED`. Only a call in progress is: 400 otherwise.
   */
  async cancelFailureFunction(account: Account, dlqId: string): Promise<void> {
    const { commit, clock, dlq, runs, messages } = this.deps;
    const found = await dlq.read(account.id, dlqId);
    const runId = found && this.runOf(found);
    const run = runId !== undefined ? await runs.readRun(account.id, runId) : undefined;
    if (!run) throw notFound(`workflow DLQ message ${dlqId} not found`);
    await commit.run(() => {
      const now = clock.now();
      const fresh = runs.getRun(account.id, run.runId);
      const failure = fresh?.failureFunction?.dlqId === dlqId ? fresh.failureFunction : undefined;
      if (!dlq.get(account.id, dlqId) || !fresh) throw notFound(`workflow DLQ message ${dlqId} not found`);
      const m = failure?.state === "CALLBACK_INPROGRESS" ? messages.get(account.id, failure.messageId) : undefined;
      if (!m || !messages.cancel(m, now))
        throw badRequest(`workflow run ${run.runId} has no failure function call in progress (${failure?.state ?? "none"})`);
    });
  }

  /** Deletes the selected entries of failed runs. */
  async delete(account: Account, selection: BulkSelection): Promise<{ deleted: number; cursor?: string }> {
    const { commit, dlq } = this.deps;
    const filter = this.workflowOnly(selection);
    const { page, cursor } = await commit.run(() => {
      const taken = takePage(dlq.oldest(account.id, filter, selection.after, selection.count + 1), selection.count, (e) => e.seq);
      for (const e of taken.page) dlq.delete(account.id, e.dlqId);
      return taken;
    });
    return compact({ deleted: page.length, cursor });
  }

  private workflowOnly(selection: BulkSelection) {
    return { ...selection.filter, sources: ["workflow"] };
  }

  /** The new run continues from the failed step: the steps before it are kept, the failed one is delivered again. */
  private resume(entry: DlqEntry, overrides: Overrides, nowMs: number): RunRecord {
    const failed = entry.message;
    const old = this.oldRun(entry);
    const run = this.newRuns.start(old, overrides, nowMs);
    const failedEntry = this.deps.runs.stepOfMessage(old.accountId, old.runId, failed.id);
    for (const e of this.deps.runs.steps(old.accountId, old.runId)) {
      if (failedEntry && e.position >= failedEntry.position) break;
      this.deps.runs.appendStep({ ...e, runId: run.runId });
    }
    const m = this.newRuns.message(failed, run, overrides, nowMs);
    const callType = failedEntry?.callType ?? (failed.workflow!.callType === "fromCallback" ? "fromCallback" : "step");
    const again = { body: failedEntry?.body ?? failed.body, headers: failedEntry?.headers ?? failed.headers, callType };
    this.newRuns.deliver(run, m, again, nowMs);
    return run;
  }

  /** The new run starts over from the initial payload, with the old run's settings. */
  private restart(entry: DlqEntry, overrides: Overrides, nowMs: number): RunRecord {
    const old = this.oldRun(entry);
    const initial = this.deps.runs.firstStep(old.accountId, old.runId);
    if (!initial) throw notFound(`workflow run ${old.runId} has no initial payload any more`);
    const run = this.newRuns.start(old, overrides, nowMs);
    const restarted = { ...entry.message, kind: "message" as const, url: old.url, method: "POST", headers: old.config.headers, body: initial.body };
    this.newRuns.deliver(run, this.newRuns.message(restarted, run, overrides, nowMs), initial, nowMs);
    return run;
  }

  private oldRun(entry: DlqEntry): RunRecord {
    const tag = entry.message.workflow!;
    const old = this.deps.runs.getRun(entry.message.accountId, tag.runId);
    if (!old) throw notFound(`workflow run ${tag.runId} of DLQ message ${entry.dlqId} not found`);
    return old;
  }
}
