import { HttpError } from "../../core/errors.ts";
import type { RunRecord } from "../../workflows/model.ts";
import type { RunStore } from "../../workflows/store.ts";
import type { WaitStore } from "../../workflows/wait-store.ts";

/** The workflow layer keeps its runs on SQLite only, for now: its requests answer 501 on PostgreSQL. */
const unavailable = () => new HttpError(501, "workflows are not available on the PostgreSQL engine yet: run svcd on SQLite for workflows");

const refuse = () => {
  throw unavailable();
};

/**
 * The workflow stores on PostgreSQL: nothing is ever stored (every workflow request is refused
 * before it writes), so what the engine asks of them for plain messages answers "none".
 */
export function unavailableWorkflowStores(): { runs: RunStore; waits: WaitStore } {
  const runs = {
    insertRun: refuse,
    saveRun: refuse,
    getRun: () => undefined,
    appendStep: refuse,
    steps: () => [],
    prefix: () => [],
    stepOfMessage: () => undefined,
    retagStep: refuse,
    unsettledRuns: (): RunRecord[] => [],
    listRuns: refuse,
    setDelivery: () => {},
    setDetails: refuse,
    addError: () => {},
    errors: () => new Map(),
    invokedBy: (): RunRecord[] => [],
    prune: () => 0,
    deleteRun: () => {},
    deleteAccount: () => {},
  };
  const waits = {
    insert: refuse,
    waiting: () => [],
    ofRun: () => [],
    delete: () => false,
    due: () => [],
    nextDeadline: () => null,
    keep: refuse,
    takeKept: () => undefined,
    deleteRun: () => {},
    deleteAccount: () => {},
  };
  return { runs: runs as unknown as RunStore, waits: waits as unknown as WaitStore };
}
