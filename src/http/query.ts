import { badRequest } from "../core/errors.ts";
import { dropNullFields } from "./null-means-unset.ts";

/** Optional non-negative integer from a query or body field; 400 naming the field otherwise. */
export function optionalInt(value: unknown, field: string, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const text = String(value).trim();
  if (!/^-?\d+$/.test(text)) throw badRequest(`invalid ${field} "${text.slice(0, 40)}": must be an integer`);
  const n = Number(text);
  if (n < min || n > max) throw badRequest(`invalid ${field} ${n}: must be between ${min} and ${max}`);
  return n;
}

export function optionalString(value: unknown, field: string, maxLength = 2048): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw badRequest(`invalid ${field}: must be a string`);
  if (value.length > maxLength) throw badRequest(`invalid ${field}: longer than ${maxLength} characters`);
  return value;
}

/** Opaque cursors are the decimal sequence number of the last item of the previous page. */
export function parseCursor(value: unknown): number | null {
  if (value === undefined || value === null || value === "") return null;
  const text = String(value);
  if (!/^\d{1,16}$/.test(text)) throw badRequest(`invalid cursor "${text.slice(0, 40)}"`);
  return Number(text);
}

/** Reads an optional JSON object body (bulk operations accept filters from body or query). */
export async function optionalJsonObject(request: Request): Promise<Record<string, unknown>> {
  const text = await request.text();
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("invalid JSON body");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest("the JSON body must be an object");
  return dropNullFields(value as Record<string, unknown>);
}

/**
 * Every value of a query key, from the raw URL: the hosted service's SDK repeats a key for a list
 * (`?dlqIds=a&dlqIds=b`), which the parsed query object collapses to its last value. Commas
 * separate values too. Undefined when the key is absent.
 */
export function queryList(request: Request, key: string): string[] | undefined {
  const values = new URL(request.url).searchParams.getAll(key);
  if (values.length === 0) return undefined;
  return values.flatMap((v) => v.split(",")).filter(Boolean);
}

export function optionalStringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === "string" ? value.split(",").filter(Boolean) : value;
  if (!Array.isArray(list) || list.some((v) => typeof v !== "string"))
    throw badRequest(`invalid ${field}: must be an array of strings`);
  return list as string[];
}

/** The filters that listings and bulk operations share, read from a query or a JSON body. */
export function commonFilters(pick: (key: string) => unknown) {
  return {
    messageId: optionalString(pick("messageId"), "messageId"),
    url: optionalString(pick("url"), "url"),
    topicName: optionalString(pick("topicName"), "topicName"),
    scheduleId: optionalString(pick("scheduleId"), "scheduleId"),
    queueName: optionalString(pick("queueName"), "queueName"),
    label: optionalString(pick("label"), "label"),
    flowControlKey: optionalString(pick("flowControlKey"), "flowControlKey"),
    callerIp: optionalString(pick("callerIp"), "callerIp"),
    fromDate: optionalInt(pick("fromDate"), "fromDate"),
    toDate: optionalInt(pick("toDate"), "toDate"),
  };
}
