import type { Static, TSchema } from "@sinclair/typebox";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { badRequest } from "../../core/errors.ts";

/** `/samples/0/at` under `body` → `body.samples[0].at`. */
export function fieldPath(base: string, pointer: string): string {
  let out = base;
  for (const seg of pointer.split("/").slice(1)) out += /^\d+$/.test(seg) ? `[${seg}]` : out ? `.${seg}` : seg;
  return out;
}

function describe(error: ValueError): string {
  const schema = error.schema as { anyOf?: Array<{ const?: unknown }> };
  if (schema.anyOf?.length && schema.anyOf.every((s) => s.const !== undefined))
    return `must be one of ${schema.anyOf.map((s) => String(s.const)).join(", ")}`;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a known field";
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** The first problem of `value` against `schema`, as `path: message`, or null when it fits. */
export function firstProblem(schema: TSchema, value: unknown, base: string): string | null {
  const error = Value.Errors(schema, value).First();
  if (!error) return null;
  const path = fieldPath(base, error.path) || base || "value";
  return `${path}: ${describe(error)}`;
}

/** Checks a request body; the 400 message names the offending field. */
export function parseBody<S extends TSchema>(schema: S, body: unknown): Static<S> {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body))
    throw badRequest("request body must be a JSON object");
  const problem = firstProblem(schema, body, "");
  if (problem) throw badRequest(`invalid request body: ${problem}`);
  return body as Static<S>;
}

/** Action endpoints answer 200 with the JSON string "OK" (fidelity.md §6). */
export const actionDone = () => Response.json("OK");
