import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";

/** The error a run's start fails with when its endpoint answered 2XX but is no workflow endpoint. */
const NOT_A_WORKFLOW =
  "detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint";

/**
 * A run's trigger (or an invoke's start) delivered to an endpoint that does not run the SDK would
 * be "delivered" and the run would never move: every SDK answer carries
 * `<Prefix>-Workflow-Sdk-Version`, so a 2XX answer without it fails the start for good.
 */
export function refuseNonWorkflowAnswer(names: WorkflowHeaderNames) {
  const header = names.sdkVersion.toLowerCase();
  return (m: MessageRecord, outcome: DeliveryOutcome): string | undefined => {
    if (!m.workflow?.init || outcome.status === undefined || outcome.status < 200 || outcome.status >= 300) return undefined;
    const answered = outcome.headers?.some(([name]) => name.toLowerCase() === header);
    return answered ? undefined : NOT_A_WORKFLOW;
  };
}
