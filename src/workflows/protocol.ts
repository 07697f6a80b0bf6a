import { badRequest } from "../core/errors.ts";
import type { Dialect } from "../core/dialect.ts";
import type { CallType, StepIdentity } from "./model.ts";

/**
 * Header names of the workflow protocol in the server's dialect (`Upstash-Workflow-RunId` in the
 * hosted one, `Svc-Workflow-RunId` in svcd's own).
 */
export function workflowHeaders(d: Dialect) {
  const p = d.prefix;
  return {
    runId: `${p}-Workflow-RunId`,
    url: `${p}-Workflow-Url`,
    createdAt: `${p}-Workflow-CreatedAt`,
    init: `${p}-Workflow-Init`,
    callType: `${p}-Workflow-CallType`,
    invoke: `${p}-Workflow-Invoke`,
    triggerBySdk: `${p}-Workflow-Trigger-By-Sdk`,
    unknownSdk: `${p}-Workflow-Unknown-Sdk`,
    sdkVersion: `${p}-Workflow-Sdk-Version`,
    // Every answer of an SDK from 1.0 on names its version (`v1.3.3`); earlier SDKs' do not.
    sdk: `${p}-Workflow-Sdk`,
    // The step a `context.call`'s answer belongs to (the SDK forwards them to its callback).
    stepId: `${p}-Workflow-StepId`,
    stepName: `${p}-Workflow-StepName`,
    stepType: `${p}-Workflow-StepType`,
    concurrent: `${p}-Workflow-Concurrent`,
  };
}

export type WorkflowHeaderNames = ReturnType<typeof workflowHeaders>;

/** What a publish says about the run it belongs to (absent: an ordinary message). */
export interface WorkflowPublish {
  runId: string;
  /** Starts the run (the trigger, or an invoke's start). */
  init: boolean;
  /** The workflow endpoint, as the SDK names it (the destination when absent). */
  url?: string;
  callType: CallType;
  /** `context.invoke`: the body wraps the invoked run's payload with the invoker's details. */
  invoke: boolean;
  /** The SDK re-triggers a run that `POST /v2/trigger` started for it. */
  triggerBySdk: boolean;
}

const RUN_ID = /^[A-Za-z0-9._:~-]{1,256}$/;
const isTrue = (v: string | null) => v?.trim().toLowerCase() === "true";

/** Reads the workflow headers of a publish; 400 when they are there but malformed. */
export function readWorkflowPublish(names: WorkflowHeaderNames, headers: Headers): WorkflowPublish | undefined {
  const runId = headers.get(names.runId)?.trim();
  if (runId === undefined) return undefined;
  if (!RUN_ID.test(runId)) throw badRequest(`invalid ${names.runId} "${runId.slice(0, 80)}": 1-256 letters, digits or ._:~-`);
  const callType = headers.get(names.callType)?.trim() ?? "step";
  if (callType !== "step" && callType !== "toCallback" && callType !== "fromCallback")
    throw badRequest(`invalid ${names.callType} "${callType.slice(0, 40)}": step, toCallback or fromCallback`);
  const init = isTrue(headers.get(names.init));
  const url = headers.get(names.url)?.trim() || undefined;
  return { runId, init, url, callType, invoke: isTrue(headers.get(names.invoke)), triggerBySdk: isTrue(headers.get(names.triggerBySdk)) };
}

/** The step named by a call's callback headers (absent or incomplete: undefined). */
export function stepIdentityOf(names: WorkflowHeaderNames, headers: Array<[string, string]>): StepIdentity | undefined {
  const get = (name: string) => headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
  const stepId = Number(get(names.stepId));
  const stepName = get(names.stepName);
  if (!Number.isInteger(stepId) || stepName === undefined) return undefined;
  return { stepId, stepName, stepType: get(names.stepType) ?? "Call", concurrent: Number(get(names.concurrent)) || 1 };
}
