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
