import { api, type Query } from "./api.ts";
import { actOnMatching, type DlqEntry } from "./dlq-api.ts";

export const RUN_STATES = ["RUN_STARTED", "RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"];

/** One step of a run's log: a completed step, or (in the `next` group) a message not yet delivered. */
export interface StepLog {
  stepId?: number;
  stepName?: string;
  stepType?: string;
  callType?: string;
  messageId?: string;
  out?: unknown;
  concurrent?: number;
  state: string;
  createdAt?: number;
  headers?: Record<string, string[]>;
  retries?: number;
  retryDelay?: string;
  sleepFor?: number | string;
  sleepUntil?: number;
  waitEventId?: string;
  waitTimeout?: boolean;
  waitTimeoutDuration?: string | number;
  callUrl?: string;
  callMethod?: string;
  callResponseStatus?: number;
  callResponseBody?: unknown;
  callResponseHeaders?: Record<string, string[]>;
  errors?: Array<{ error: string; body?: string; status?: number; time: number }>;
}

export interface StepGroup {
  type: "sequential" | "parallel" | "next";
  steps: StepLog[];
}

export interface FailureFunction {
  messageId?: string;
  url?: string;
  state?: string;
  dlqId?: string;
  failStatus?: number;
  failResponse?: string;
  failHeaders?: Record<string, string[]>;
  responseStatus?: number;
  responseBody?: string;
}

/** A run as `GET /v2/workflows/logs` lists it (the SDK's `WorkflowRunLog`). */
export interface WorkflowRun {
  workflowRunId: string;
  workflowUrl: string;
  workflowState: string;
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  failureFunction?: FailureFunction;
  steps: StepGroup[];
  workflowRunResponse?: string;
  invoker?: { workflowRunId: string; workflowUrl: string; workflowRunCreatedAt: number };
  /** A rerun: the run it reran and the step it reran from. */
  rerunOf?: { workflowRunId: string; workflowRunCreatedAt: number; stepName?: string; stepId?: number };
  dlqId?: string;
  label?: string;
  labels?: string[];
  /** The run's OpenTelemetry trace, when svcd traces. */
  traceId?: string;
}

/** A failed run's DLQ entry (`GET /v2/dlq?source=workflow`). */
export interface WorkflowDlqEntry extends DlqEntry {
  workflowRunId: string;
  workflowUrl: string;
  workflowCreatedAt?: number;
  failureCallbackInfo?: { state?: string; responseStatus?: number; responseBody?: string };
}

/** A run started from a DLQ entry (resume, restart), a rerun, or told its failure function ran again. */
interface StartedRun {
  workflowRunId: string;
  workflowCreatedAt: number;
}

const enc = encodeURIComponent;

export const readRuns = (query: Query) => api<{ cursor?: string; runs: WorkflowRun[] }>("/v2/workflows/logs", { query });

export async function readRun(runId: string): Promise<WorkflowRun | null> {
  const page = await readRuns({ workflowRunId: runId, count: 1 });
  return page.runs.find((r) => r.workflowRunId === runId) ?? null;
}

export const cancelRuns = (runIds: string[]) => api<{ cancelled: number }>("/v2/workflows/runs", { method: "DELETE", query: { workflowRunIds: runIds.join(",") } });

export const readWorkflowDlq = (query: Query) => api<{ cursor?: string; messages: WorkflowDlqEntry[] }>("/v2/dlq", { query: { ...query, source: "workflow" } });

export const resumeRun = (dlqId: string) => api<StartedRun>(`/v2/workflows/dlq/resume/${enc(dlqId)}`, { method: "POST" });
export const restartRun = (dlqId: string) => api<StartedRun>(`/v2/workflows/dlq/restart/${enc(dlqId)}`, { method: "POST" });
/** Resume or restart the runs of several entries at once. */
export const startRuns = (action: "resume" | "restart", dlqIds: string[]) =>
  api<{ workflowRuns: StartedRun[] }>(`/v2/workflows/dlq/${action}`, { method: "POST", body: { dlqIds } });
/** A new run from a step of this one: the steps before it kept (with `results` for some), the rest run again. */
export const rerunRun = (
  runId: string,
  body: { fromStep: string | number; results?: Record<string, unknown> },
  headers?: Record<string, string>,
) => api<StartedRun>(`/v2/workflows/runs/${enc(runId)}/rerun`, { method: "POST", body, headers });
export const retryFailureFunction = (dlqId: string) => api<StartedRun>(`/v2/workflows/dlq/callback/${enc(dlqId)}`, { method: "POST" });
export const deleteWorkflowDlq = (dlqIds: string[]) => api<{ deleted: number }>("/v2/workflows/dlq", { method: "DELETE", body: { dlqIds } });
/** Resume or restart the runs of every entry matching `filters`; resolves to how many. */
export const startRunsMatching = (action: "resume" | "restart", filters: Query) =>
  actOnMatching("POST", `/v2/workflows/dlq/${action}`, filters, (a: { workflowRuns?: StartedRun[] }) => a.workflowRuns?.length ?? 0, readWorkflowDlq);
export const deleteWorkflowDlqMatching = (filters: Query) =>
  actOnMatching("DELETE", "/v2/workflows/dlq", filters, (a: { deleted?: number }) => a.deleted ?? 0, readWorkflowDlq);

/** Steps a run has completed (the initial payload not counted). */
export const completedSteps = (run: WorkflowRun) =>
  run.steps.filter((g) => g.type !== "next").reduce((n, g) => n + g.steps.length, 0) - 1;

/** The name of the step whose failure failed the run, as the SDK told it in its failing answer. */
export function failedStepName(run: WorkflowRun): string | undefined {
  const headers = run.failureFunction?.failHeaders ?? {};
  const name = Object.keys(headers).find((h) => /-error-step-name$/i.test(h));
  return name ? headers[name]?.[0] : undefined;
}

/** Messages of the run not yet delivered: pending, retrying, failed or canceled. */
export const pendingSteps = (run: WorkflowRun) => run.steps.find((g) => g.type === "next")?.steps ?? [];
