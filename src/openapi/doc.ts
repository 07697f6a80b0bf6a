import type { TSchema } from "@sinclair/typebox";
import type { DocumentDecoration } from "elysia";

/**
 * OpenAPI documentation a route carries in its `detail`, for what its TypeBox schemas cannot say:
 * headers and query keys the handler reads itself (publish settings, filters), a body it reads
 * itself, and its answers. The generator (generate.ts) merges these with the route's schemas.
 */
/** What a route documents beyond its schemas; `summary` as Elysia's own `detail`. */
export interface OperationDoc {
  summary: string;
  description?: string;
  parameters?: ParameterDoc[];
  /** null: the handler reads no body (a `parse: "none"` route would otherwise show a free-form one). */
  requestBody?: object | null;
  responses?: Record<number, object>;
  security?: Array<Record<string, string[]>>;
}

/**
 * A route's `detail`. OpenAPI's TypeScript types do not take TypeBox schemas (which are JSON
 * Schema): the document is plain JSON in the end, so the shape is only handed through here.
 */
export const apiDoc = (doc: OperationDoc): DocumentDecoration => doc as DocumentDecoration;

export interface ParameterDoc {
  name: string;
  in: "query" | "header";
  description: string;
  required?: boolean;
  schema: object;
}

const STRING = { type: "string" };

export const queryParam = (name: string, description: string, schema: object = STRING): ParameterDoc => ({ name, in: "query", description, schema });

export const headerParam = (name: string, description: string, schema: object = STRING): ParameterDoc => ({ name, in: "header", description, schema });

/** A JSON answer (or request body) with its schema. */
export const jsonContent = (schema: TSchema | object, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** A request body the handler takes as raw bytes (the message body of a publish). */
export const rawBody = (description: string) => ({
  required: false,
  description,
  content: { "*/*": { schema: { type: "string", format: "binary" } } },
});

/** An optional JSON body the handler reads itself (bulk operations: ids and filters). */
export const optionalJsonBody = (schema: TSchema | object, description: string) => ({
  required: false,
  ...jsonContent(schema, description),
});

/** Filters as query parameters (a listing), or as the fields of an optional JSON body (a bulk operation). */
export function filterQuery(filters: Array<{ name: string; description: string; schema: object }>): ParameterDoc[] {
  return filters.map((f) => queryParam(f.name, f.description, f.schema));
}

export function filterBody(filters: Array<{ name: string; description: string; schema: object }>, extra: Record<string, object> = {}) {
  const properties: Record<string, object> = { ...extra };
  for (const f of filters) properties[f.name] = { description: f.description, anyOf: [f.schema, { type: "array", items: f.schema }] };
  return optionalJsonBody(
    { type: "object", properties },
    "ids and filters, as in the query (a value or a list of values); none: every entry, up to count",
  );
}

/** `count` and `cursor` of a bulk operation. */
export const bulkControls = (maxCount: number): ParameterDoc[] => [
  queryParam("count", `act on at most this many entries, oldest first (at most ${maxCount})`, { type: "integer", minimum: 1, maximum: maxCount }),
  queryParam("cursor", "continue after the entries of the previous call (its answer's cursor)"),
];

/** `count` and `cursor` of a listing. */
export const pageControls = (maxCount: number): ParameterDoc[] => [
  queryParam("count", `at most this many entries per page (at most ${maxCount})`, { type: "integer", minimum: 1, maximum: maxCount }),
  queryParam("cursor", "the next page: the cursor of the previous answer"),
];
