import type { DeadLetter } from "../dlq/dead-letters.ts";
import type { DeadLetterSink } from "../messages/lifecycle.ts";
import type { WriteTx } from "../store/transactor.ts";
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
export function workflowDeadLetters(
  inner: { put(tx: WriteTx, entry: DeadLetter): Promise<string> },
  runs: RunStorage,
): DeadLetterSink {
  return {
    async put(tx, entry) {
      const tag = entry.message.workflow;
      if (!tag) return inner.put(tx, entry);
      if (tag.callType === "toCallback" || tag.callType === "failureCall") return undefined;
      const run = await runs.getRun(tx, entry.message.accountId, tag.runId);
      if (!run) return inner.put(tx, entry);
      if (!isActive(run.state)) return undefined;
      // The run's failure function is called right after, in the same write.
      const failureFunctionState = entry.message.failureCallback && ("CALLBACK_INPROGRESS" as const);
      return inner.put(tx, { ...entry, workflowCreatedAt: run.createdAt, failureFunctionState });
    },
  };
}
