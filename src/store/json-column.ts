import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { firstProblem } from "../core/validation.ts";

/** A stored JSON value that is not what its column holds: a damaged row, or one written by a stranger. */
export class MalformedRowError extends Error {}

/**
 * Reads a JSON column: parses the stored text and checks the value against the column's schema
 * (compiled once: it runs for every message claimed), so a damaged row fails at once with a line
 * naming the column, instead of as an undefined field somewhere later.
 */
export function jsonColumn<S extends TSchema>(column: string, schema: S): (text: string) => Static<S> {
  const compiled = TypeCompiler.Compile(schema);
  return (text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new MalformedRowError(`${column}: stored text is not JSON`);
    }
    if (!compiled.Check(value)) throw new MalformedRowError(`stored ${firstProblem(schema, value, column)}`);
    return value;
  };
}
