import type { RunRecord } from "./model.ts";
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
