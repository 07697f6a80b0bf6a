import { notFound } from "../core/errors.ts";
import { headerMap } from "../messages/views.ts";
import type { RunRecord } from "./model.ts";
import { rawStep, textOf, type RawStep } from "./raw-steps.ts";
import type { RunEndings, RunSettler } from "./run-endings.ts";
import { runLog, type InvokedRun, type WorkflowRunLog } from "./run-log.ts";
import { isActive } from "./run-state.ts";
import type { RunFilter, RunStore } from "./store.ts";
import type { WaitStore } from "./wait-store.ts";

/** Most runs one bulk cancel ends. */
const MAX_BULK = 10_000;

export interface RunServiceDeps {
  clock: { now(): number };
  commit: { run<T>(write: () => T): Promise<T> };
  runs: RunStore;
  endings: RunEndings;
  settler: RunSettler;
  waits: WaitStore;
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
    await commit.run(() => {
      const run = runs.getRun(accountId, runId);
      if (!run) throw notFound(`workflow run ${runId} not found`);
      const now = clock.now();
      const ended = cancel ? endings.end(run, "cancelled", now) : endings.end(run, "finished", now, { result: result || undefined });
      if (ended) settler.settle(run, now);
    });
  }

  /** Cancels the given runs, or up to `count` runs matching `filter`; returns how many it cancelled. */
  async cancel(accountId: string, selection: { runIds?: string[]; filter?: RunFilter; count?: number }): Promise<number> {
    const { commit, clock, runs, endings, settler } = this.deps;
    return commit.run(() => {
      const now = clock.now();
      const targets = selection.runIds
        ? selection.runIds.flatMap((id) => runs.getRun(accountId, id) ?? [])
        : runs.listRuns(accountId, { ...selection.filter, states: ["RUN_STARTED"] }, null, Math.min(selection.count ?? MAX_BULK, MAX_BULK));
      let cancelled = 0;
      for (const run of targets) {
        if (!endings.end(run, "cancelled", now)) continue;
        settler.settle(run, now);
        cancelled++;
      }
      return cancelled;
    });
  }

  /** The run's step list while it runs (the SDK's lazy fetch); 404 once it has ended. */
  rawSteps(accountId: string, runId: string): RawStep[] {
    const run = this.deps.runs.getRun(accountId, runId);
    if (!run || !isActive(run.state)) throw notFound(`workflow run ${runId} not found or already ended`);
    return this.deps.runs.steps(accountId, runId).map(rawStep);
  }

  /** Runs as `client.logs()` reads them, newest first, with the cursor of the next page. */
  logs(accountId: string, filter: RunFilter, cursor: number | null, count: number): { cursor?: string; runs: WorkflowRunLog[] } {
    const found = this.deps.runs.listRuns(accountId, filter, cursor, count);
    return {
      cursor: found.length === count ? String(found[found.length - 1]!.seq) : undefined,
      runs: found.map((run) => this.log(run)),
    };
  }

  private log(run: RunRecord): WorkflowRunLog {
    const { runs, waits } = this.deps;
    const invoked = runs.invokedBy(run.accountId, run.runId).flatMap((child): InvokedRun[] => {
      if (!child.invoker) return [];
      const start = runs.prefix(child.accountId, child.runId, 0)[0];
      return [
        {
          runId: child.runId,
          url: child.url,
          createdAt: child.createdAt,
          step: child.invoker.step,
          messageId: start?.messageId,
          body: start ? textOf(start.body) : "",
          headers: headerMap(child.config.headers),
        },
      ];
    });
    return runLog(run, runs.steps(run.accountId, run.runId), {
      errors: runs.errors(run.accountId, run.runId),
      waiting: waits.ofRun(run.accountId, run.runId),
      invoked,
    });
  }
}
