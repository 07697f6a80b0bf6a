import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import type { RunStorage } from "./storage.ts";

/** The error a run's start fails with when its endpoint answered 2XX but is no workflow endpoint. */
const NOT_A_WORKFLOW =
  "detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint";

/** The error a `POST /v2/trigger` run fails with when the endpoint's SDK is older than 1.0. */
const SDK_TOO_OLD = "trigger rest api is only usable with sdk versions after v1.0.0 major version";

/**
 * Why a 2XX answer to a run's start does not start it, which fails the start for good (retrying
 * would not change the endpoint):
 * - a trigger (or an invoke's start) delivered to an endpoint that does not run the SDK would be
 *   "delivered" and the run would never move: every SDK answer carries `<Prefix>-Workflow-Sdk-Version`;
 * - a run started by `POST /v2/trigger` needs an SDK from 1.0 on, whose every answer names its
 *   version (`<Prefix>-Workflow-Sdk`). Asked to take a run over (`<Prefix>-Workflow-Unknown-Sdk`),
 *   such an SDK triggers it again under the same id before it answers; an SDK before 1.0 answers
 *   without doing so: the run is still waiting for its SDK when the answer comes.
 * The recorder asks inside the write that records the answer (`tx`).
 */
export function refuseNonWorkflowAnswer(names: WorkflowHeaderNames, runs: RunStorage) {
  const answered = (outcome: DeliveryOutcome, header: string) =>
    outcome.headers?.some(([name]) => name.toLowerCase() === header.toLowerCase()) ?? false;
  const check = async (tx: WriteTx, accountId: string, runId: string, outcome: DeliveryOutcome) => {
    const run = await runs.getRun(tx, accountId, runId);
    return run?.awaitingSdk || (run?.restTriggered && !answered(outcome, names.sdk)) ? SDK_TOO_OLD : undefined;
  };
  // Every outcome comes here: most are answered with one promise, made once.
  return (tx: WriteTx, m: MessageRecord, outcome: DeliveryOutcome): Promise<string | undefined> => {
    if (!m.workflow?.init || outcome.status === undefined || outcome.status < 200 || outcome.status >= 300) return NONE;
    if (!answered(outcome, names.sdkVersion)) return Promise.resolve(NOT_A_WORKFLOW);
    return check(tx, m.accountId, m.workflow.runId, outcome);
  };
}

const NONE: Promise<undefined> = Promise.resolve(undefined);
