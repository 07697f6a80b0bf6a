import { expect } from "bun:test";

/**
 * Checks a value against a plain JSON Schema, as an OpenAPI document holds it: the subset the
 * document uses (types, properties, required, items, anyOf, const, enum, patternProperties,
 * minimum, maximum). Returns the problems, `path: what`, empty when it fits.
 */
export function schemaProblems(schema: any, value: unknown, path = ""): string[] {
  if (!schema || typeof schema !== "object") return [];
  if (schema.anyOf) {
    const fits = schema.anyOf.some((s: unknown) => schemaProblems(s, value, path).length === 0);
    return fits ? [] : [`${path || "/"}: fits none of anyOf`];
  }
  if ("const" in schema && value !== schema.const) return [`${path || "/"}: is not ${JSON.stringify(schema.const)}`];
  if (schema.enum && !schema.enum.includes(value)) return [`${path || "/"}: is not one of ${schema.enum.join(", ")}`];
  const type = schema.type as string | undefined;
  const typeOf = (v: unknown) =>
    v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v;
  if (type) {
    const actual = typeOf(value);
    const ok = actual === type || (type === "number" && actual === "integer");
    if (!ok) return [`${path || "/"}: is ${actual}, not ${type}`];
  }
  const problems: string[] = [];
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${path}: above ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => problems.push(...schemaProblems(schema.items, v, `${path}/${i}`)));
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in obj)) problems.push(`${path}/${key}: is missing`);
    for (const [key, v] of Object.entries(obj)) {
      if (schema.properties?.[key]) problems.push(...schemaProblems(schema.properties[key], v, `${path}/${key}`));
      else for (const [, s] of Object.entries(schema.patternProperties ?? {})) problems.push(...schemaProblems(s, v, `${path}/${key}`));
    }
  }
  return problems;
}

/** The real answer fits the schema the OpenAPI document `doc` gives for its status; returns its body. */
export async function answerFits(doc: any, path: string, method: string, res: Response): Promise<any> {
  const body = await res.json();
  const schema = doc.paths[path]?.[method]?.responses[String(res.status)]?.content?.["application/json"]?.schema;
  expect({ path, method, status: res.status, documented: schema !== undefined }).toEqual({ path, method, status: res.status, documented: true });
  expect({ path, method, problems: schemaProblems(schema, body) }).toEqual({ path, method, problems: [] });
  return body;
}
