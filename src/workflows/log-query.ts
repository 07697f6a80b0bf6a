import { badRequest } from "../core/errors.ts";
import { parseFilter, type FilterKey } from "../filters/filter.ts";
import { RUN_STATES, STEP_STATES, type RunState, type StepState } from "./model.ts";
import type { RunFilter } from "./storage.ts";

/** What a logs request asks for beside its page: which runs, by their steps' states too, and how much of each body. */
export interface LogsQuery {
  filter: RunFilter;
  /** Runs with a step in one of these states, or themselves in one of `runStates`. */
  stepStates?: StepState[];
  runStates?: RunState[];
  /** Every request and response body of the log cut to its first this many characters. */
  trimBody?: number;
}

const MAX_RUNS = 1000;

/**
 * The run filters of a request. Bulk cancel reads them strictly: an unknown key or a filter
 * without a value is 400, so a typo never widens a cancel to every run.
 */
export function runFilter(request: Request, accepts: readonly FilterKey[], strict: boolean, control: string[]): RunFilter {
  return splitStates(parseFilter({ query: new URL(request.url).searchParams }, { accepts, strict, control }), false).filter;
}

/** A logs request: the run filters, `state` with step states too, `workflowRuns` and `trimBody`. */
export function logsQuery(request: Request, accepts: readonly FilterKey[]): LogsQuery {
  const query = new URL(request.url).searchParams;
  const { filter, stepStates, runStates } = splitStates(parseFilter({ query }, { accepts, strict: false, control: [] }), true);
  const runs = workflowRuns(query.getAll("workflowRuns"));
  const trim = query.get("trimBody");
  if (trim !== null && !/^\d{1,9}$/.test(trim)) throw badRequest(`invalid trimBody "${trim.slice(0, 40)}": a number of characters (0 or more)`);
  return { filter: runs ? { ...filter, runs } : filter, stepStates, runStates, trimBody: trim === null ? undefined : Number(trim) };
}

function splitStates(f: ReturnType<typeof parseFilter>, steps: boolean): Omit<LogsQuery, "trimBody"> {
  const known: readonly string[] = steps ? [...RUN_STATES, ...STEP_STATES] : RUN_STATES;
  const unknown = f.states?.find((state) => !known.includes(state));
  if (unknown) throw badRequest(`invalid filter state "${unknown.slice(0, 40)}": one of ${known.join(", ")}`);
  const runStates = f.states?.filter((s): s is RunState => (RUN_STATES as readonly string[]).includes(s));
  const stepStates = f.states?.filter((s): s is StepState => (STEP_STATES as readonly string[]).includes(s));
  if (!stepStates?.length) return { filter: { ...f, states: runStates } };
  // A run matches a step state or a run state: the run states are checked with the steps, not in the query.
  return { filter: { ...f, states: undefined }, stepStates, runStates };
}

/** `workflowRuns=ID@TS,…` (repeated keys too): the runs' ids with their creation times, Unix ms. */
function workflowRuns(values: string[]): RunFilter["runs"] {
  const pairs = values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean);
  if (values.length === 0) return undefined;
  if (pairs.length > MAX_RUNS) throw badRequest(`invalid workflowRuns: at most ${MAX_RUNS} runs`);
  return pairs.map((pair) => {
    const at = pair.lastIndexOf("@");
    const createdAt = pair.slice(at + 1);
    if (at <= 0 || !/^\d{1,16}$/.test(createdAt))
      throw badRequest(`invalid workflowRuns "${pair.slice(0, 60)}": give runId@workflowCreatedAt (Unix ms), comma separated`);
    return { runId: pair.slice(0, at), createdAt: Number(createdAt) };
  });
}

/** The fields of a run's log that carry a request's or an answer's body. */
const BODY_FIELDS = new Set([
  "out",
  "body",
  "callBody",
  "callResponseBody",
  "invokedWorkflowRunBody",
  "responseBody",
  "failResponse",
  "workflowRunResponse",
]);

/** The log with every body cut to its first `max` characters (a copy; the log is not changed). */
export function trimBodies<T>(value: T, max: number): T {
  if (Array.isArray(value)) return value.map((v) => trimBodies(v, max)) as T;
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = BODY_FIELDS.has(key) && typeof v === "string" ? v.slice(0, max) : trimBodies(v, max);
  return out as T;
}

/** Whether a run's log has a step (a finished one, one under way, or a message still to deliver) in one of `states`. */
export function hasStepIn(log: { steps: Array<{ steps: Array<{ state?: string }> }> }, states: readonly StepState[]): boolean {
  return log.steps.some((group) => group.steps.some((step) => step.state !== undefined && (states as readonly string[]).includes(step.state)));
}
