import type { CallbackSpec, MessageRecord } from "../model/message.ts";
import type { CallType, RunRecord } from "./model.ts";
import type { WorkflowHeaderNames } from "./protocol.ts";

type Pairs = Array<[string, string]>;

/** `base` with every header of `override` replacing the ones of the same name. */
export function mergeHeaders(base: Pairs, override: Pairs): Pairs {
  const names = new Set(override.map(([name]) => name.toLowerCase()));
  return [...base.filter(([name]) => !names.has(name.toLowerCase())), ...override];
}

export const withoutHeaders = (pairs: Pairs, drop: string[]): Pairs => {
  const names = new Set(drop.map((n) => n.toLowerCase()));
  return pairs.filter(([name]) => !names.has(name.toLowerCase()));
};

/** What every delivery of a run carries: which run it is, where it lives, when it started. */
export function runHeaders(names: WorkflowHeaderNames, run: RunRecord): Pairs {
  return [
    [names.runId, run.runId],
    [names.url, run.url],
    [names.createdAt, String(run.createdAt)],
  ];
}

/** `{"A": ["1"]}` as the SDK sends header maps → pairs (first value of each). */
export function pairsOfMap(map: Record<string, string[] | string> | undefined): Pairs {
  const pairs: Pairs = [];
  for (const [name, value] of Object.entries(map ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string") pairs.push([name, first]);
  }
  return pairs;
}

export function headersOf(pairs: Pairs): Headers {
  const headers = new Headers();
  for (const [name, value] of pairs) headers.set(name, value);
  return headers;
}

/** Marks a message as the run's, with the run's delivery headers and failure callback. */
export function joinRun(names: WorkflowHeaderNames, run: RunRecord, m: MessageRecord, callType: CallType, init: boolean): void {
  m.workflow = init ? { runId: run.runId, callType, init } : { runId: run.runId, callType };
  m.headers = [...withoutHeaders(m.headers, [names.runId, names.url, names.createdAt]), ...runHeaders(names, run)];
  if (m.failureCallback) m.failureCallback = failureCallbackOf(names, run, m.failureCallback);
  if (m.labels === undefined) m.labels = run.labels;
}

/** The run's failure callback: it names the run, and the failure function's call is marked as the run's. */
export function failureCallbackOf(names: WorkflowHeaderNames, run: RunRecord, spec: CallbackSpec): CallbackSpec {
  return {
    ...spec,
    headers: [...withoutHeaders(spec.headers, [names.runId, names.url, names.createdAt]), ...runHeaders(names, run)],
    workflow: { runId: run.runId, callType: "failureCall" },
  };
}
