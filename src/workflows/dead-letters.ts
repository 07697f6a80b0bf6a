import type { DeadLetter } from "../dlq/dead-letters.ts";
import type { DeadLetterSink } from "../messages/lifecycle.ts";
import { isActive } from "./run-state.ts";
import type { RunStorage } from "./storage.ts";

/**
 * The DLQ as workflow runs use it: a failed run has one entry, the message that failed it (with
 * the run's creation time and its failure function's state, which the DLQ filters by). A
 * `context.call` whose retries ran out gets none (its last answer goes back to the run, which
 * decides: hosted workflows do not fail a run for it), nor does a failure function's call that
 * failed (the run's entry shows that), nor a message of a run that has already ended (an attempt
 * that was under way when the run failed or finished: the run has its ending already).
 */
export function workflowDeadLetters(inner: { put(entry: DeadLetter): string }, runs: RunStorage): DeadLetterSink {
  return {
    put(entry) {
      const tag = entry.message.workflow;
      if (!tag) return inner.put(entry);
      if (tag.callType === "toCallback" || tag.callType === "failureCall") return undefined;
      const run = runs.getRun(entry.message.accountId, tag.runId);
      if (!run) return inner.put(entry);
      if (!isActive(run.state)) return undefined;
      // The run's failure function is called right after, in the same write.
      return inner.put({ ...entry, workflowCreatedAt: run.createdAt, failureFunctionState: entry.message.failureCallback && "CALLBACK_INPROGRESS" });
    },
  };
}
