import { redactedValue, type RedactSpec } from "../model/redact.ts";
import type { StepLogGroup } from "./run-log.ts";
import type { StepLog } from "./step-logs.ts";

/** The texts of a step's log that carry a body: step outputs, a call's request and answer, an invoke's payload. */
const BODY_FIELDS = ["out", "body", "callBody", "callResponseBody", "invokedWorkflowRunBody"];
/** Its header maps (name → values). */
const HEADER_FIELDS = ["headers", "callHeaders", "callResponseHeaders", "invokedWorkflowRunHeaders"];

/**
 * A run triggered with Redact-Fields shows its steps redacted in its log (the hosted service shows
 * step outputs as `REDACTED:<sha256>`), while the endpoint's SDK still reads them in the clear.
 */
export function redactStepGroups(groups: StepLogGroup[], spec: RedactSpec | undefined): StepLogGroup[] {
  if (!spec) return groups;
  for (const group of groups) for (const step of group.steps) redactStep(step, spec);
  return groups;
}

function redactStep(step: StepLog, spec: RedactSpec): void {
  if (spec.body)
    for (const field of BODY_FIELDS) if (typeof step[field] === "string") step[field] = redactedValue(step[field] as string);
  if (!spec.allHeaders && !spec.headers) return;
  const named = new Set(spec.headers);
  for (const field of HEADER_FIELDS) {
    const map = step[field] as Record<string, string[]> | undefined;
    if (!map || typeof map !== "object") continue;
    step[field] = Object.fromEntries(
      Object.entries(map).map(([name, values]) =>
        spec.allHeaders || named.has(name.toLowerCase()) ? [name, values.map((v) => redactedValue(v))] : [name, values],
      ),
    );
  }
}
