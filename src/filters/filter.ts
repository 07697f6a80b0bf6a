import { badRequest } from "../core/errors.ts";
import { FAILURE_CALLBACK_STATES } from "../model/message.ts";

/**
 * The filters of logs, the DLQ and bulk cancel (docs/messaging-api.md, Filters). Every list is "any of these"
 * (OR within one filter); the filters given together must all match (AND across filters).
 */
export interface Filter {
  messageIds?: string[];
  dlqIds?: string[];
  urls?: string[];
  /** The destination URL's host, lower case (`a.example`, or `a.example:8080` with its port). */
  hosts?: string[];
  /** The destination URL's path (`/` when the URL has none). */
  paths?: string[];
  topicNames?: string[];
  scheduleIds?: string[];
  queueNames?: string[];
  labels?: string[];
  flowControlKeys?: string[];
  callerIps?: string[];
  states?: string[];
  responseStatuses?: number[];
  /** DLQ entries of these workflow runs. */
  workflowRunIds?: string[];
  /** `workflow`: only DLQ entries that failed a workflow run. */
  sources?: string[];
  /** DLQ entries of the workflow runs created at these times (Unix ms). */
  workflowCreatedAts?: number[];
  /** DLQ entries of failed workflow runs whose failure function is in one of these states. */
  failureFunctionStates?: string[];
  fromDate?: number;
  toDate?: number;
}

type IntField = "responseStatuses" | "workflowCreatedAts";
type ListField = Exclude<keyof Filter, "fromDate" | "toDate" | IntField>;

/** How a wire key is read: several texts (some from a closed set), several integers, or one date (Unix ms). */
type Kind =
  | { field: ListField; split: (value: string) => string[]; oneOf?: readonly string[] }
  | { field: IntField; int: true; max: number }
  | { field: "fromDate" | "toDate"; date: true };


const commas = (value: string) => value.split(",");
/** A comma inside a URL or a path is part of it; only one before the next URL or path separates. */
const beforeUrls = (value: string) => value.split(/,(?=https?:\/\/)/i);
const beforePaths = (value: string) => value.split(/,(?=\/)/);

const KINDS = {
  messageId: { field: "messageIds", split: commas },
  messageIds: { field: "messageIds", split: commas },
  dlqIds: { field: "dlqIds", split: commas },
  url: { field: "urls", split: beforeUrls },
  host: { field: "hosts", split: commas },
  path: { field: "paths", split: beforePaths },
  topicName: { field: "topicNames", split: commas },
  scheduleId: { field: "scheduleIds", split: commas },
  queueName: { field: "queueNames", split: commas },
  label: { field: "labels", split: commas },
  flowControlKey: { field: "flowControlKeys", split: commas },
  callerIp: { field: "callerIps", split: commas },
  state: { field: "states", split: commas },
  responseStatus: { field: "responseStatuses", int: true, max: 999 },
  workflowRunId: { field: "workflowRunIds", split: commas },
  // A workflow run's URL is its messages' URL.
  workflowUrl: { field: "urls", split: beforeUrls },
  source: { field: "sources", split: commas },
  workflowCreatedAt: { field: "workflowCreatedAts", int: true, max: Number.MAX_SAFE_INTEGER },
  failureFunctionState: { field: "failureFunctionStates", split: commas, oneOf: FAILURE_CALLBACK_STATES },
  fromDate: { field: "fromDate", date: true },
  toDate: { field: "toDate", date: true },
} satisfies Record<string, Kind>;

export type FilterKey = keyof typeof KINDS;

/** The filters each endpoint understands. */
const SHARED: FilterKey[] = ["url", "host", "path", "topicName", "scheduleId", "queueName", "label", "flowControlKey", "callerIp", "fromDate", "toDate"];
export const LOG_FILTERS: readonly FilterKey[] = [...SHARED, "messageId", "messageIds", "state"];
const WORKFLOW_RUN_FILTERS: FilterKey[] = ["workflowRunId", "workflowUrl", "workflowCreatedAt", "failureFunctionState"];
export const DLQ_FILTERS: readonly FilterKey[] = [...SHARED, "messageId", "dlqIds", "responseStatus", "source", ...WORKFLOW_RUN_FILTERS];
/** The workflow DLQ's bulk actions (resume, restart, delete). */
export const WORKFLOW_DLQ_FILTERS: readonly FilterKey[] = ["dlqIds", ...WORKFLOW_RUN_FILTERS, "label", "callerIp", "flowControlKey", "fromDate", "toDate"];
export const CANCEL_FILTERS: readonly FilterKey[] = [...SHARED, "messageId", "messageIds"];
const RUN_FILTERS: FilterKey[] = ["workflowUrl", "host", "path", "label", "callerIp", "flowControlKey", "fromDate", "toDate"];
/** Workflow run logs (`client.logs()`): a run's id, creation time, state, or a message of it too. */
export const WORKFLOW_LOG_FILTERS: readonly FilterKey[] = [...RUN_FILTERS, "workflowRunId", "workflowCreatedAt", "state", "messageId"];
/** Bulk cancel of workflow runs (`client.cancel({ filter })`); run ids come as `workflowRunIds`. */
export const WORKFLOW_CANCEL_FILTERS: readonly FilterKey[] = RUN_FILTERS;

const MAX_VALUES = 1000;
const MAX_VALUE_LENGTH = 2048;

export interface FilterRequest {
  query: URLSearchParams;
  /** The JSON body of a bulk operation (filters may come from either). */
  body?: Record<string, unknown>;
}

export interface FilterOptions {
  accepts: readonly FilterKey[];
  /**
   * Destructive bulk operations: an unknown key or a filter without a value is refused (400)
   * rather than ignored, so a typo never widens a bulk delete to everything.
   */
  strict: boolean;
  /** Keys that are not filters but belong to the request (`count`, `cursor`, the token). */
  control: readonly string[];
}

/** Reads the filters from the query (repeated keys or commas) and the JSON body (strings, numbers or arrays). */
export function parseFilter(request: FilterRequest, options: FilterOptions): Filter {
  const accepted = new Set<string>(options.accepts);
  const control = new Set(options.control);
  const raw = new Map<FilterKey, string[]>();
  const collect = (key: string, values: string[]) => {
    if (!accepted.has(key)) {
      if (options.strict && !control.has(key))
        throw badRequest(`unknown filter "${key.slice(0, 60)}": this operation accepts ${options.accepts.join(", ")}`);
      return;
    }
    const list = raw.get(key as FilterKey) ?? [];
    raw.set(key as FilterKey, list.concat(values));
  };
  for (const key of new Set(request.query.keys())) collect(key, request.query.getAll(key));
  for (const [key, value] of Object.entries(request.body ?? {})) collect(key, bodyValues(key, value, accepted.has(key)));

  const filter: Filter = {};
  for (const [key, texts] of raw) {
    const kind: Kind = KINDS[key];
    const values = texts.flatMap((t) => ("split" in kind ? kind.split(t) : commas(t))).map((v) => v.trim()).filter(Boolean);
    if (values.length === 0) {
      if (options.strict) throw badRequest(`filter "${key}" has no value`);
      continue;
    }
    if (values.length > MAX_VALUES) throw badRequest(`invalid filter ${key}: at most ${MAX_VALUES} values`);
    const long = values.find((v) => v.length > MAX_VALUE_LENGTH);
    if (long) throw badRequest(`invalid filter ${key}: a value is longer than ${MAX_VALUE_LENGTH} characters`);
    if ("date" in kind) {
      if (values.length > 1) throw badRequest(`invalid filter ${key}: give one time (Unix milliseconds)`);
      filter[kind.field] = integer(key, values[0]!, Number.MAX_SAFE_INTEGER);
    } else if ("int" in kind) {
      filter[kind.field] = [...new Set(values.map((v) => integer(key, v, kind.max)))];
    } else {
      const unknown = kind.oneOf && values.find((v) => !kind.oneOf!.includes(v));
      if (unknown) throw badRequest(`invalid filter ${key} "${unknown.slice(0, 40)}": one of ${kind.oneOf!.join(", ")}`);
      // Two keys may fill one list (`messageId` and `messageIds`).
      const more = key === "host" ? values.map((v) => v.toLowerCase()) : values;
      filter[kind.field] = [...new Set([...(filter[kind.field] ?? []), ...more])];
    }
  }
  return filter;
}

/** True when the filter restricts nothing (every entry matches). */
export function isEmptyFilter(filter: Filter): boolean {
  return Object.keys(filter).length === 0;
}

/** A body value: a string or a list of strings; numbers too where the filter is a number. */
function bodyValues(key: string, value: unknown, known: boolean): string[] {
  // Unknown keys are judged by their name alone (refused or ignored), not by their value.
  if (!known) return [];
  const kind: Kind = KINDS[key as FilterKey];
  const numeric = !("split" in kind);
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((v) => typeof v === "string" || (numeric && typeof v === "number")))
    throw badRequest(`invalid filter ${key}: must be ${numeric ? "a number" : "a string"} or an array of them`);
  return list.map(String);
}

function integer(key: string, text: string, max: number): number {
  if (!/^\d{1,16}$/.test(text)) throw badRequest(`invalid filter ${key} "${text.slice(0, 40)}": must be a non-negative integer`);
  const n = Number(text);
  if (n > max) throw badRequest(`invalid filter ${key} ${n}: at most ${max}`);
  return n;
}

const FILTER_DOCS: Record<FilterKey, string> = {
  messageId: "a message id",
  messageIds: "message ids",
  dlqIds: "DLQ ids",
  url: "destination URLs, exactly as published",
  host: "destination hosts (`a.example`, or `a.example:8080`)",
  path: "destination paths (`/` for a URL without one)",
  topicName: "URL Group names",
  scheduleId: "schedule ids",
  queueName: "queue names",
  label: "labels (a message with several matches any of them)",
  flowControlKey: "flow-control keys",
  callerIp: "IP addresses of the publishing clients",
  state: "states: CREATED, ACTIVE, RETRY, ERROR, DELIVERED, FAILED, CANCEL_REQUESTED, CANCELED, or IN_PROGRESS",
  responseStatus: "HTTP statuses of the last answer",
  workflowRunId: "workflow run ids",
  workflowUrl: "workflow URLs",
  source: "`workflow`: only entries that failed a workflow run",
  workflowCreatedAt: "creation times of the failed workflow runs, Unix ms",
  failureFunctionState: "states of the failed workflow runs' failure functions: CALLBACK_INPROGRESS, CALLBACK_SUCCESS, CALLBACK_FAIL or CALLBACK_CANCELED",
  fromDate: "from this time on, Unix ms",
  toDate: "up to this time, Unix ms",
};

/**
 * A filter's documentation, for the operations that take it (OpenAPI parameters): several values
 * as repeated keys or comma separated.
 */
export function filterDocs(keys: readonly FilterKey[]): Array<{ name: string; description: string; schema: object }> {
  return keys.map((key) => {
    const kind: Kind = KINDS[key];
    const several = "split" in kind || "int" in kind;
    return {
      name: key,
      description: `${FILTER_DOCS[key]}${several ? "; several as repeated keys or comma separated" : ""}`,
      schema: "date" in kind ? { type: "integer", minimum: 0 } : "int" in kind ? { type: "string", pattern: "^[0-9]+(,[0-9]+)*$" } : { type: "string" },
    };
  });
}
