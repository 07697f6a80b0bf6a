import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";
import type { RunStorage } from "./storage.ts";

/** The error a run's start fails with when its endpoint answered 2XX but is no workflow endpoint. */
const NOT_A_WORKFLOW =
  "detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint";

/** The error a `POST /v2/trigger` run fails with when the endpoint's SDK did not take it over. */
const SDK_TOO_OLD = "trigger rest api is only usable with sdk versions after v1.0.0 major version";

/**
 * Why a 2XX answer to a run's start does not start it, which fails the start for good (retrying
 * would not change the endpoint):
 * - a trigger (or an invoke's start) delivered to an endpoint that does not run the SDK would be
 *   "delivered" and the run would never move: every SDK answer carries `<Prefix>-Workflow-Sdk-Version`;
 * - a run started by `POST /v2/trigger` is taken over by the endpoint's SDK (1.0 or later), which
 *   triggers it again under the same id before it answers. An SDK before 1.0 answers as an SDK
 *   does without doing so: the run is still waiting for its SDK when the answer comes.
 * The recorder asks inside the write that records the answer, which has the message's run loaded.
 */
export function refuseNonWorkflowAnswer(names: WorkflowHeaderNames, runs: RunStorage) {
  const header = names.sdkVersion.toLowerCase();
  return (m: MessageRecord, outcome: DeliveryOutcome): string | undefined => {
    if (!m.workflow?.init || outcome.status === undefined || outcome.status < 200 || outcome.status >= 300) return undefined;
    const answered = outcome.headers?.some(([name]) => name.toLowerCase() === header);
    if (!answered) return NOT_A_WORKFLOW;
    return runs.getRun(m.accountId, m.workflow.runId)?.awaitingSdk ? SDK_TOO_OLD : undefined;
  };
}
