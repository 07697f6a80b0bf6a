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
import type { Transactor, WriteTx } from "../store/transactor.ts";
import { readOverrides, type Overrides } from "./dlq-overrides.ts";
import type { RunRecord } from "./model.ts";
import { NewRuns, type StartedRun } from "./new-runs.ts";
import type { RunMessages } from "./run-endings.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import type { RunStorage } from "./storage.ts";

export interface WorkflowDlqDeps {
  clock: { now(): number };
  commit: Pick<Transactor, "run">;
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
  readonly fields = async (e: DlqEntry): Promise<Record<string, unknown> | undefined> => {
    const runId = this.runOf(e);
    if (runId === undefined) return undefined;
    const run = await this.deps.runs.readRun(e.message.accountId, runId);
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
    const deleted = await commit.run(async (tx) => {
      const entry = await dlq.get(tx, account.id, dlqId);
      return entry !== undefined && this.runOf(entry) !== undefined && (await dlq.delete(tx, account.id, dlqId));
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
    const runs = await commit.run(async (tx) => {
      const now = clock.now();
      const started: StartedRun[] = [];
      for (const dlqId of dlqIds) {
        const entry = await dlq.get(tx, account.id, dlqId);
        if (!entry) continue;
        const run =
          action === "resume"
            ? await this.resume(tx, entry, overrides, now)
            : await this.restart(tx, entry, overrides, now);
        await dlq.delete(tx, account.id, entry.dlqId);
        started.push({ workflowRunId: run.runId, workflowCreatedAt: run.createdAt });
      }
      return started;
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
    const run = await commit.run(async (tx) => {
      const entry = await dlq.get(tx, account.id, dlqId);
      const run = entry && (await runs.getRun(tx, account.id, runId));
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
      const call = callbackMessage(entry.message, spec, "failure-callback", outcome, now, dlqId, trace);
      await lifecycle.accept(tx, call, now);
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
    await commit.run(async (tx) => {
      const now = clock.now();
      const fresh = await runs.getRun(tx, account.id, run.runId);
      const failure = fresh?.failureFunction?.dlqId === dlqId ? fresh.failureFunction : undefined;
      if (!(await dlq.get(tx, account.id, dlqId)) || !fresh) throw notFound(`workflow DLQ message ${dlqId} not found`);
      const inProgress = failure?.state === "CALLBACK_INPROGRESS";
      const m = inProgress ? await messages.get(tx, account.id, failure.messageId) : undefined;
      if (!m || !(await messages.cancel(tx, m, now)))
        throw badRequest(`workflow run ${run.runId} has no failure function call in progress (${failure?.state ?? "none"})`);
    });
  }

  /** Deletes the selected entries of failed runs. */
  async delete(account: Account, selection: BulkSelection): Promise<{ deleted: number; cursor?: string }> {
    const { commit, dlq } = this.deps;
    const filter = this.workflowOnly(selection);
    const { page, cursor } = await commit.run(async (tx) => {
      const oldest = await dlq.oldest(tx, account.id, filter, selection.after, selection.count + 1);
      const taken = takePage(oldest, selection.count, (e) => e.seq);
      for (const e of taken.page) await dlq.delete(tx, account.id, e.dlqId);
      return taken;
    });
    return compact({ deleted: page.length, cursor });
  }

  private workflowOnly(selection: BulkSelection) {
    return { ...selection.filter, sources: ["workflow"] };
  }

  /** The new run continues from the failed step: the steps before it are kept, the failed one is delivered again. */
  private async resume(tx: WriteTx, entry: DlqEntry, overrides: Overrides, nowMs: number): Promise<RunRecord> {
    const { runs } = this.deps;
    const failed = entry.message;
    const old = await this.oldRun(tx, entry);
    const run = await this.newRuns.start(tx, old, overrides, nowMs);
    const failedEntry = await runs.stepOfMessage(tx, old.accountId, old.runId, failed.id);
    for (const e of await runs.steps(tx, old.accountId, old.runId)) {
      if (failedEntry && e.position >= failedEntry.position) break;
      await runs.appendStep(tx, { ...e, runId: run.runId });
    }
    const m = this.newRuns.message(tx, failed, run, overrides, nowMs);
    const callType = failedEntry?.callType ?? (failed.workflow!.callType === "fromCallback" ? "fromCallback" : "step");
    const again = { body: failedEntry?.body ?? failed.body, headers: failedEntry?.headers ?? failed.headers, callType };
    await this.newRuns.deliver(tx, run, m, again, nowMs);
    return run;
  }

  /** The new run starts over from the initial payload, with the old run's settings. */
  private async restart(tx: WriteTx, entry: DlqEntry, overrides: Overrides, nowMs: number): Promise<RunRecord> {
    const old = await this.oldRun(tx, entry);
    const initial = await this.deps.runs.firstStep(tx, old.accountId, old.runId);
    if (!initial) throw notFound(`workflow run ${old.runId} has no initial payload any more`);
    const run = await this.newRuns.start(tx, old, overrides, nowMs);
    const restarted = { ...entry.message, kind: "message" as const, url: old.url, method: "POST", headers: old.config.headers, body: initial.body };
    await this.newRuns.deliver(tx, run, this.newRuns.message(tx, restarted, run, overrides, nowMs), initial, nowMs);
    return run;
  }

  private async oldRun(tx: WriteTx, entry: DlqEntry): Promise<RunRecord> {
    const tag = entry.message.workflow!;
    const old = await this.deps.runs.getRun(tx, entry.message.accountId, tag.runId);
    if (!old) throw notFound(`workflow run ${tag.runId} of DLQ message ${entry.dlqId} not found`);
    return old;
  }
}
