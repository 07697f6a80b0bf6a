import type { RouteFunction, WorkflowServeOptions } from "@upstash/workflow";
import type { WorkflowWorld } from "./workflow-world.ts";

/** What the reruns' tests read of a run's log. */
export interface RunLog {
  workflowRunId: string;
  workflowState: string;
  workflowRunCreatedAt: number;
  workflowRunResponse?: string;
  rerunOf?: { workflowRunId: string; workflowRunCreatedAt: number; stepName: string; stepId?: number };
  label?: string;
  steps: Array<{ type: string; steps: Array<Record<string, any>> }>;
}

/**
 * Reruns on a workflow world: serving a workflow while counting its endpoint's calls per run,
 * asking for a rerun, and reading a run's log as the tests compare it.
 */
export function rerunKit(w: WorkflowWorld) {
  return {
    /** Serves `fn` at `path`; `calls(runId)` counts the endpoint's calls for that run. */
    serveCounted<T = unknown>(path: string, fn: RouteFunction<T, unknown>, options?: WorkflowServeOptions<T, unknown>) {
      const url = w.serve<T, unknown>(path, fn, options);
      const served = w.routeHandler(path)!;
      const counts = new Map<string, number>();
      w.route(path, (request) => {
        const runId = request.headers.get("upstash-workflow-runid") ?? "";
        counts.set(runId, (counts.get(runId) ?? 0) + 1);
        return served(request);
      });
      return { url, calls: (runId: string) => counts.get(runId) ?? 0 };
    },
    /** `POST /v2/workflows/runs/{runId}/rerun` with a JSON body. */
    rerun: (runId: string, body: unknown, headers: Record<string, string> = {}) =>
      w.svc.api(`/v2/workflows/runs/${encodeURIComponent(runId)}/rerun`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json", ...headers },
      }),
    /** A rerun that must start: the new run's id. */
    async rerunOk(runId: string, body: unknown, headers: Record<string, string> = {}): Promise<string> {
      const res = await this.rerun(runId, body, headers);
      const answer = (await res.json()) as { workflowRunId: string; workflowCreatedAt: number; error?: string };
      if (res.status !== 200) throw new Error(`rerun answered ${res.status}: ${answer.error}`);
      return answer.workflowRunId;
    },
    log: async (runId: string) => (await w.run(runId)) as unknown as RunLog,
    /** The log's steps as names, each group joined with `+` (parallel branches sorted), `next` left out. */
    stepNames: (log: RunLog) =>
      log.steps.filter((g) => g.type !== "next").map((g) => g.steps.map((s) => s.stepName).sort().join("+")),
  };
}
