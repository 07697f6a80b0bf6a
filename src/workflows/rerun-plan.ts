import { badRequest } from "../core/errors.ts";
import type { StepEntry } from "./model.ts";
import { bytesOf, isPlanStep, parseStep, type ParsedStep } from "./raw-steps.ts";
import { withResult } from "./rerun-results.ts";
import type { StepLogGroup } from "./run-log.ts";

/*
 * What a rerun keeps of its source run's step list. The new run's list is a prefix of the old one:
 * every entry before the first one of the chosen step (of its parallel group, when it is a
 * branch), so the SDK, replaying it, finds the steps before as completed and runs the chosen one
 * again. Its last entry is delivered again, as a new message; the others are copied as they are.
 */

/** Where a rerun starts: the first step id it runs again (1: all but the payload), and the step as the source log names it. */
export interface RerunStart {
  fromStepId: number;
  stepName?: string;
  stepId?: number;
}

type Shown = { step: Record<string, unknown>; group: StepLogGroup };

/** The step `fromStep` names in the source run's log (a step id, or a step name): 400 when it has none. */
export function chooseStart(runId: string, groups: StepLogGroup[], entries: StepEntry[], fromStep: string | number): RerunStart {
  if (fromStep === "init") return { fromStepId: 1, stepName: "init" };
  const shown: Shown[] = groups
    .filter((g) => g.type !== "next")
    .flatMap((group) => group.steps.filter((step) => typeof step.stepId === "number").map((step) => ({ step, group })));
  const matches = shown.filter(({ step }) => (typeof fromStep === "number" ? step.stepId === fromStep : step.stepName === fromStep));
  if (matches.length > 1) {
    const ids = matches.map(({ step }) => step.stepId).join(", ");
    throw badRequest(`step name "${fromStep}" names several steps of workflow run ${runId} (ids ${ids}): give its stepId`);
  }
  if (matches[0]) return startOf(matches[0]);
  // A step that failed never handed in a result: the run's log names it with the delivery that ran it.
  const next = groups.find((g) => g.type === "next")?.steps ?? [];
  const failing = next.find((s) => s.stepName === fromStep && typeof s.messageId === "string");
  const delivery = failing && entries.find((e) => e.messageId === failing.messageId);
  if (delivery) {
    const plan = delivery.callType === "step" ? parseStep(delivery.body) : undefined;
    const branch = plan && isPlanStep(plan) ? shown.find(({ step }) => step.stepId === plan.targetStep) : undefined;
    if (branch) return startOf(branch);
    const before = entries.filter((e) => e.position <= delivery.position).map(stepIdOf);
    return { fromStepId: Math.max(0, ...before.filter((id) => id !== undefined)) + 1, stepName: String(fromStep) };
  }
  // The step after the last one the log shows (a cancelled run's step under way, which the log no
  // longer shows): the run goes on from where it was.
  const known = [...shown.map(({ step }) => step.stepId), ...entries.map(stepIdOf)].filter((id) => typeof id === "number");
  if (fromStep === Math.max(0, ...(known as number[])) + 1) return { fromStepId: fromStep, stepId: fromStep };
  const names = ["init", ...new Set(shown.map(({ step }) => `${step.stepName} (${step.stepId})`))];
  throw badRequest(`workflow run ${runId} has no step ${JSON.stringify(fromStep)}: its steps are ${names.join(", ")}`);
}

/** A step of the log: a branch reruns its whole parallel group. */
function startOf({ step, group }: Shown): RerunStart {
  const id = step.stepId as number;
  const branches = group.type === "parallel" ? group.steps.map((s) => s.stepId).filter((s) => typeof s === "number") : [id];
  const ids = branches as number[];
  return { fromStepId: Math.min(...ids), stepName: String(step.stepName), stepId: id };
}

/** The step an entry belongs to (a plan step: the branch it announces); undefined for a call's answer. */
function stepIdOf(e: StepEntry): number | undefined {
  if (e.position === 0) return 0;
  if (e.callType === "toCallback") return e.details?.step?.stepId;
  if (e.callType === "fromCallback") return undefined;
  const step = parseStep(e.body);
  return step && isPlanStep(step) ? step.targetStep : step?.stepId;
}

/** A step that handed in its result (not a plan step, not a call under way). */
function finished(e: StepEntry): ParsedStep | undefined {
  const step = e.callType === "step" && e.position > 0 ? parseStep(e.body) : undefined;
  return step && !isPlanStep(step) ? step : undefined;
}

/**
 * The entries the new run keeps, in order, with `results` (by step name) as the results of those
 * steps: 400 when a name is no kept step's. A step the source run handed in twice (deliveries are
 * at least once) is kept once: the SDK ignores a delivery whose last step is a repeat.
 */
export function keptEntries(entries: StepEntry[], start: RerunStart, results: Record<string, unknown>): StepEntry[] {
  let cut = entries.findIndex((e) => e.position > 0 && (stepIdOf(e) ?? -1) >= start.fromStepId);
  if (cut < 0) cut = entries.length;
  // The last kept entry is delivered again: it must be a step's result (or the payload), never a call on its way.
  while (cut > 1 && !finished(entries[cut - 1]!)) cut--;
  const seen = new Set<string>();
  const kept = entries.slice(0, cut).filter((e) => {
    const step = e.callType === "step" && e.position > 0 ? parseStep(e.body) : undefined;
    if (!step) return true;
    const key = isPlanStep(step) ? `plan ${step.targetStep}` : `step ${step.stepId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const unknown = new Set(Object.keys(results));
  const edited = kept.map((e) => {
    const step = finished(e);
    if (!step || !Object.hasOwn(results, step.stepName)) return e;
    unknown.delete(step.stepName);
    return { ...e, body: bytesOf(JSON.stringify(withResult(step, results[step.stepName]))) };
  });
  if (unknown.size > 0) {
    const names = [...new Set(kept.flatMap((e) => finished(e)?.stepName ?? []))];
    const keeps = names.length ? names.join(", ") : "no step";
    throw badRequest(`results name steps the rerun does not keep: ${[...unknown].join(", ")} (it keeps ${keeps})`);
  }
  return edited;
}

/**
 * An entry as the new run keeps it. A webhook made by a kept step (`context.createWebhook`) names
 * its run in its URL: it then names the new run, whose wait takes the calls made to it.
 */
export function movedTo(e: StepEntry, fromRunId: string, toRunId: string): StepEntry {
  const step = finished(e);
  if (step?.stepType !== "CreateWebhook" || typeof step.out !== "string") return { ...e, runId: toRunId };
  let out: { webhookUrl?: unknown; eventId?: unknown };
  try {
    out = JSON.parse(step.out);
  } catch {
    return { ...e, runId: toRunId };
  }
  if (typeof out.webhookUrl !== "string" || typeof out.eventId !== "string") return { ...e, runId: toRunId };
  const webhookUrl = out.webhookUrl.replace(`/${fromRunId}/${out.eventId}`, `/${toRunId}/${out.eventId}`);
  return { ...e, runId: toRunId, body: bytesOf(JSON.stringify({ ...step, out: JSON.stringify({ ...out, webhookUrl }) })) };
}
