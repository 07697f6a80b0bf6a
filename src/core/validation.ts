import type { Static, TSchema } from "@sinclair/typebox";
import { ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";

/**
 * The one place that turns a schema violation into text: `<field>: <what is wrong>`, e.g.
 * `samples[0].at: must be an integer of at least 0`. Used for request validation (every route's
 * TypeBox schemas), batch elements, management bodies and the config file.
 */

/** What is known of one violation: TypeBox's ValueError, or the same fields of Elysia's. */
export interface SchemaProblem {
  type: number;
  path: string;
  schema: unknown;
  value: unknown;
  message: string;
}

interface SchemaShape {
  type?: string | string[];
  format?: string;
  const?: unknown;
  anyOf?: SchemaShape[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
}

/** `/samples/0/at` under `base` → `base.samples[0].at` (`base` may be empty). */
export function fieldName(base: string, pointer: string): string {
  let out = base;
  for (const seg of pointer.split("/").slice(1)) out += /^\d+$/.test(seg) ? `[${seg}]` : out ? `.${seg}` : seg;
  return out;
}

const KIND_OF: Record<string, string> = {
  integer: "an integer",
  number: "a number",
  numeric: "a number",
  string: "a string",
  boolean: "true or false",
  object: "a JSON object",
  array: "a list",
  null: "null",
};

/** "an integer", "a number", ... of a schema, looking through the coercion unions Elysia builds. */
function kindOf(schema: SchemaShape): string | undefined {
  const kinds = new Set<string>();
  const visit = (s: SchemaShape) => {
    if (s.anyOf) return s.anyOf.forEach(visit);
    // `{type: "string", format: "integer"}` is the text form of an integer (query strings).
    const name = s.format && KIND_OF[s.format] ? s.format : typeof s.type === "string" ? s.type : undefined;
    if (name && KIND_OF[name]) kinds.add(KIND_OF[name]!);
  };
  visit(schema);
  if (kinds.has("an integer")) return "an integer";
  if (kinds.has("a number")) return "a number";
  return kinds.size === 1 ? [...kinds][0] : undefined;
}

/** "from 1 to 10", "of at least 0", ... or "" when the schema has no bounds. */
function bounds(s: SchemaShape): string {
  const low = s.minimum ?? s.exclusiveMinimum;
  const high = s.maximum ?? s.exclusiveMaximum;
  if (s.minimum !== undefined && s.maximum !== undefined) return ` from ${s.minimum} to ${s.maximum}`;
  if (low !== undefined && high === undefined) return s.minimum !== undefined ? ` of at least ${low}` : ` above ${low}`;
  if (high !== undefined && low === undefined) return s.maximum !== undefined ? ` of at most ${high}` : ` below ${high}`;
  if (low !== undefined && high !== undefined) return ` above ${low} and below ${high}`;
  return "";
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/**
 * A union of different kinds, each with its bounds: "a non-empty string or an integer of at least 1"
 * (undefined for the coercion unions, whose variants are one kind).
 */
function unionText(s: SchemaShape): string | undefined {
  const variants = (s.anyOf ?? []).map((v) => ({ v, kind: kindOf(v) }));
  const kinds = new Set(variants.map(({ kind }) => kind));
  if (variants.length < 2 || kinds.has(undefined) || kinds.size < 2) return undefined;
  const text = ({ v, kind }: (typeof variants)[number]) => {
    if (kind === "a string") return v.minLength === 1 ? "a non-empty string" : kind;
    return kind === "an integer" || kind === "a number" ? `${kind}${bounds(v)}` : kind!;
  };
  return variants.map(text).join(" or ");
}

/** What is wrong, as the second half of `<field>: <what is wrong>`. */
export function describeProblem(p: SchemaProblem): string {
  const s = (p.schema ?? {}) as SchemaShape;
  if (p.type === ValueErrorType.ObjectRequiredProperty || (p.value === undefined && p.type !== ValueErrorType.ObjectAdditionalProperties))
    return "is required";
  if (p.type === ValueErrorType.ObjectAdditionalProperties) return "is not a known field";
  if (s.anyOf?.length && s.anyOf.every((o) => o.const !== undefined))
    return `must be one of ${s.anyOf.map((o) => String(o.const)).join(", ")}`;
  if (s.const !== undefined) return `must be ${JSON.stringify(s.const)}`;
  switch (p.type) {
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? "must not be empty" : `must be at least ${s.minLength} characters long`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${s.maxLength} characters long`;
    case ValueErrorType.StringPattern:
      return `must match ${s.pattern}`;
    case ValueErrorType.ArrayMinItems:
      return s.minItems === 1 ? "must not be empty" : `must have at least ${s.minItems} items`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s.maxItems} items`;
  }
  const union = unionText(s);
  if (union) return `must be ${union}`;
  const kind = kindOf(s);
  if (kind) return `must be ${kind}${kind === "an integer" || kind === "a number" ? bounds(s) : ""}`;
  return lowerFirst(p.message);
}

/** `<field>: <what is wrong>`; the field is `base` when the value itself is wrong. */
export function problemText(base: string, p: SchemaProblem): string {
  return `${fieldName(base, p.path) || base || "value"}: ${describeProblem(p)}`;
}

/** The first problem of `value` against `schema` as `<field>: <what is wrong>`, or null when it fits. */
export function firstProblem(schema: TSchema, value: unknown, base = ""): string | null {
  const error = Value.Errors(schema, value).First();
  return error ? problemText(base, error) : null;
}

/** `value` typed by `schema`, or `fail(problem)` (which throws the caller's kind of error). */
export function checkShape<S extends TSchema>(schema: S, value: unknown, base: string, fail: (problem: string) => never): Static<S> {
  const problem = firstProblem(schema, value, base);
  if (problem) fail(problem);
  return value as Static<S>;
}
