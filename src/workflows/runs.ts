import { notFound } from "../core/errors.ts";
import { headerMap } from "../messages/views.ts";
import type { Transactor } from "../store/transactor.ts";
import type { RunRecord } from "./model.ts";
import { rawStep, textOf, type RawStep } from "./raw-steps.ts";
import type { RunEndings, RunSettler } from "./run-endings.ts";
import { runLog, type WorkflowRunLog } from "./run-log.ts";
import type { InvokedRun } from "./step-logs.ts";
import { invokeResult, isActive } from "./run-state.ts";
import { hasStepIn, trimBodies, type LogsQuery } from "./log-query.ts";
import type { RunFilter, RunStorage, WaitStorage } from "./storage.ts";

/** Most runs one bulk cancel ends. */
const MAX_BULK = 10_000;
/** Most pages of runs one logs request reads to find runs by their steps' states. */
const SCAN_PAGES = 20;

export interface RunServiceDeps {
  clock: { now(): number };
  commit: Pick<Transactor, "run">;
  runs: RunStorage;
  endings: RunEndings;
  settler: RunSettler;
  waits: WaitStorage;
}

/** What clients and the SDK do with runs: end them, cancel them, read their steps and logs. */
export class RunService {
  constructor(private readonly deps: RunServiceDeps) {}

  /**
   * The SDK ends its run: finished with its function's result, or cancelled by `context.cancel()`.
   * Ending a run that has already ended changes nothing; an unknown run is 404.
   */
  async end(accountId: string, runId: string, cancel: boolean, result: string): Promise<void> {
    const { commit, clock, runs, endings, settler } = this.deps;
    await commit.run(async (tx) => {
      const run = await runs.getRun(tx, accountId, runId);
      if (!run) throw notFound(`workflow run ${runId} not found`);
      const now = clock.now();
      const ended = cancel
        ? await endings.end(tx, run, "cancelled", now)
        : await endings.end(tx, run, "finished", now, { result: result || undefined });
      if (ended) await settler.settle(tx, run, now);
    });
  }

  /**
   * Cancels the given runs, or up to `count` runs matching `filter`; returns how many it cancelled.
   * The runs a filter matches are found first; the write cancels those still running then.
   */
  async cancel(accountId: string, selection: { runIds?: string[]; filter?: RunFilter; count?: number }): Promise<number> {
    const { commit, clock, runs, endings, settler } = this.deps;
    const runIds =
      selection.runIds ??
      (await runs.listRuns(accountId, { ...selection.filter, states: ["RUN_STARTED"] }, null, Math.min(selection.count ?? MAX_BULK, MAX_BULK))).map(
        (run) => run.runId,
      );
    if (runIds.length === 0) return 0;
    return commit.run(async (tx) => {
      const now = clock.now();
      let cancelled = 0;
      for (const id of runIds) {
        const run = await runs.getRun(tx, accountId, id);
        if (!run || !(await endings.end(tx, run, "cancelled", now))) continue;
        await settler.settle(tx, run, now);
        cancelled++;
      }
      return cancelled;
    });
  }

  /** The run's step list while it runs (the SDK's lazy fetch); 404 once it has ended. */
  async rawSteps(accountId: string, runId: string): Promise<RawStep[]> {
    const run = await this.deps.runs.readRun(accountId, runId);
    if (!run || !isActive(run.state)) throw notFound(`workflow run ${runId} not found or already ended`);
    return (await this.deps.runs.readSteps(accountId, runId)).map(rawStep);
  }

  /**
   * Runs as `client.logs()` reads them, newest first, with the cursor of the next page. Asked for
   * step states, runs are read a page at a time and kept when their log has such a step, up to
   * `count`, reading at most `SCAN_PAGES` pages (the cursor goes on from the last one read).
   */
  async logs(accountId: string, query: LogsQuery, cursor: number | null, count: number): Promise<{ cursor?: string; runs: WorkflowRunLog[] }> {
    const { stepStates, runStates, trimBody } = query;
    const kept: WorkflowRunLog[] = [];
    let next: number | null = cursor;
    for (let page = 0; page < (stepStates ? SCAN_PAGES : 1); page++) {
      const want = count - kept.length;
      const found = await this.deps.runs.listRuns(accountId, query.filter, next, want);
      next = found.length === want ? (found[found.length - 1]!.seq ?? null) : null;
      for (const log of await Promise.all(found.map((run) => this.log(run)))) {
        const wanted = !stepStates || (runStates?.includes(log.workflowState) ?? false) || hasStepIn(log, stepStates);
        if (wanted) kept.push(trimBody === undefined ? log : trimBodies(log, trimBody));
      }
      if (next === null || kept.length === count) break;
    }
    return { cursor: next === null ? undefined : String(next), runs: kept };
  }

  private async log(run: RunRecord): Promise<WorkflowRunLog> {
    const { runs, waits } = this.deps;
    const children = await runs.invokedBy(run.accountId, run.runId);
    const invoked = await Promise.all(
      children.map(async (child): Promise<InvokedRun | undefined> => {
        if (!child.invoker) return undefined;
        const [start] = await runs.readSteps(child.accountId, child.runId, 0);
        return {
          runId: child.runId,
          url: child.url,
          createdAt: child.createdAt,
          step: child.invoker.step,
          messageId: start?.messageId,
          body: start ? textOf(start.body) : "",
          headers: headerMap(child.config.headers),
          result: isActive(child.state) ? undefined : JSON.stringify(invokeResult(child)),
        };
      }),
    );
    const [steps, errors, waiting] = await Promise.all([
      runs.readSteps(run.accountId, run.runId),
      runs.errors(run.accountId, run.runId),
      waits.ofRun(run.accountId, run.runId),
    ]);
    return runLog(run, steps, { errors, waiting, invoked: invoked.filter((i) => i !== undefined) });
  }
}
