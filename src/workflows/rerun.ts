import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import { notFound } from "../core/errors.ts";
import type { Wake } from "../core/wake.ts";
import type { MessageRecord } from "../model/message.ts";
import type { Transactor } from "../store/transactor.ts";
import { readOverrides } from "./dlq-overrides.ts";
import type { NewRuns, StartedRun } from "./new-runs.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import { chooseStart, keptEntries, movedTo } from "./rerun-plan.ts";
import type { RunService } from "./runs.ts";
import type { RunStorage } from "./storage.ts";

/** What `POST /v2/workflows/runs/{id}/rerun` reads: the step to run again from, new results for kept steps by name. */
export interface RerunRequest {
  fromStep: string | number;
  results?: Record<string, unknown>;
}

export interface WorkflowRerunDeps {
  clock: { now(): number };
  commit: Pick<Transactor, "run">;
  dialect: Dialect;
  names: WorkflowHeaderNames;
  runs: RunStorage;
  /** The source run's log: the chosen step is found as the log shows it. */
  logs: Pick<RunService, "logs">;
  newRuns: NewRuns;
  wake: Wake;
}

/**
 * Runs any run again from a chosen step, whatever its state: a new run whose endpoint first sees
 * the steps before it as completed (their results kept, or the ones the request gives), then
 * runs the chosen step and what follows. The source run is left as it is; the new one names it
 * (`rerunOf` in its log). The request's headers override the source run's settings, as on a DLQ
 * resume.
 */
export class WorkflowRerun {
  constructor(private readonly deps: WorkflowRerunDeps) {}

  async rerun(account: Account, runId: string, request: RerunRequest, headers: Headers): Promise<StartedRun> {
    const { clock, commit, runs, newRuns } = this.deps;
    const overrides = readOverrides(this.deps.dialect, this.deps.names.runId, account, headers, clock.now());
    const { runs: [log] } = await this.deps.logs.logs(account.id, { filter: { workflowRunIds: [runId] } }, null, 1);
    if (!log) throw notFound(`workflow run ${runId} not found`);
    const start = chooseStart(runId, log.steps, await runs.readSteps(account.id, runId), request.fromStep);
    const run = await commit.run(async (tx) => {
      const now = clock.now();
      const source = await runs.getRun(tx, account.id, runId);
      if (!source) throw notFound(`workflow run ${runId} not found`);
      const kept = keptEntries(await runs.steps(tx, account.id, runId), start, request.results ?? {});
      const { stepName, stepId } = start;
      const rerunOf = { workflowRunId: runId, workflowRunCreatedAt: source.createdAt, stepName, stepId };
      // A run the endpoint's SDK never took over (`POST /v2/trigger`) can be taken over by the new run's.
      const { awaitingSdk, restTriggered } = source;
      const run = await newRuns.start(tx, source, overrides, now, { rerunOf, awaitingSdk, restTriggered });
      const moved = kept.map((e) => movedTo(e, runId, run.runId));
      const last = moved.pop()!;
      for (const e of moved) await runs.appendStep(tx, { ...e, state: "DELIVERED", nextDeliveryAt: undefined });
      // The last kept step's delivery again: the endpoint replays the kept steps and runs the chosen one.
      const template: MessageRecord = {
        id: "",
        accountId: account.id,
        kind: "message",
        state: "CREATED",
        dispatchAt: now,
        notBefore: now,
        createdAt: now,
        retried: 0,
        maxRetries: 0,
        url: source.url,
        method: "POST",
        headers: last.headers,
        body: last.body,
        timeoutMs: account.limits.maxTimeoutMs,
        callerIp: source.callerIp,
        redact: source.config.redact,
      };
      await newRuns.deliver(tx, run, newRuns.message(tx, template, run, overrides, now), last, now);
      return run;
    });
    this.deps.wake();
    return { workflowRunId: run.runId, workflowCreatedAt: run.createdAt };
  }
}
