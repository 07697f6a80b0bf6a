import type { RunRecord, RunState } from "./model.ts";

/** How a run ends: its function returned, it was cancelled, or one of its messages failed for good. */
export type RunEnding = "finished" | "cancelled" | "failed";

const ENDED_AS: Record<RunEnding, RunState> = {
  finished: "RUN_SUCCESS",
  cancelled: "RUN_CANCELED",
  failed: "RUN_FAILED",
};

/** Only a started run takes new steps, waits, notifications or an ending. */
export const isActive = (state: RunState) => state === "RUN_STARTED";

/** The state after `ending`, or null when the run has already ended (endings are final). */
export function endRun(state: RunState, ending: RunEnding): RunState | null {
  return isActive(state) ? ENDED_AS[ending] : null;
}

/**
 * What `context.invoke` resolves to once the invoked run ended: the result its function returned,
 * and both flags, always there, `false` unless the run ended so. A failed or cancelled run has no
 * result (the hosted service sends no body then: the SDK's own checks expect `body === undefined`).
 */
export function invokeResult(run: RunRecord): { body?: string; isFailed: boolean; isCanceled: boolean } {
  const body = run.state === "RUN_SUCCESS" ? run.result || undefined : undefined;
  return { ...(body === undefined ? {} : { body }), isFailed: run.state === "RUN_FAILED", isCanceled: run.state === "RUN_CANCELED" };
}
