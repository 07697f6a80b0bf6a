import { badRequest } from "../core/errors.ts";
import { isValidHeaderName, isValidHeaderValue } from "./canonical-header.ts";

/** A JSON header object as clients send it: name → a value or a list of values. */
export type HeaderObject = Record<string, string | string[]>;

/** `{"A": "1", "B": ["2", "3"]}` → `[["A","1"],["B","2"],["B","3"]]`, rejecting what HTTP cannot carry (400). */
export function headerPairs(headers: unknown, what: string): Array<[string, string]> {
  if (headers === undefined) return [];
  // Checked here, not by the route schema: Elysia would coerce a string into {"0": "n", ...}.
  if (typeof headers !== "object" || headers === null || Array.isArray(headers))
    throw badRequest(`invalid ${what}: must be an object of header names to a string or an array of strings`);
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!isValidHeaderName(name)) throw badRequest(`invalid header name "${name.slice(0, 80)}" in ${what}`);
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== "string") throw badRequest(`invalid value of header "${name}" in ${what}: must be a string or an array of strings`);
      if (!isValidHeaderValue(v)) throw badRequest(`invalid value of header "${name}" in ${what}: control characters are not allowed`);
      pairs.push([name, v]);
    }
  }
  return pairs;
}

export function toHeaders(pairs: Array<[string, string]>): Headers {
  const headers = new Headers();
  for (const [name, value] of pairs) headers.append(name, value);
  return headers;
}
