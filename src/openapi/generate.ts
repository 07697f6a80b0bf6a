/**
 * Builds the OpenAPI 3.1 document from the route table of the built HTTP apps. Request schemas are
 * the TypeBox schemas the routes validate with (TypeBox schemas are JSON Schema), so the document
 * cannot drift from what the server accepts. No Elysia import: routes come in as plain data.
 */

/** What the generator reads of an Elysia route (`app.routes`). */
export interface RouteLike {
  method: string;
  path: string;
  hooks?: Record<string, unknown>;
}

export type SecurityRequirement = Record<string, string[]>;

/** Which API a route belongs to: its tag, its default security and, if it differs, its base URL. */
export interface RouteSection {
  tag: string;
  security: SecurityRequirement[];
  servers?: Array<{ url: string; description?: string }>;
}

export interface OpenApiInput {
  title: string;
  version: string;
  description: string;
  servers: Array<{ url: string; description?: string }>;
  tags: Array<{ name: string; description: string }>;
  securitySchemes: Record<string, unknown>;
  routes: RouteLike[];
  sectionOf(route: RouteLike): RouteSection;
}

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;

const ERROR_REF = { $ref: "#/components/schemas/Error" };
const ANY_METHOD = ["get", "post", "put", "patch", "delete"];
const HTTP_METHODS = new Set([...ANY_METHOD, "head", "options", "trace"]);
/** Fields of Elysia's `detail` that are OpenAPI operation fields too. */
const DETAIL_FIELDS = ["summary", "description", "deprecated", "externalDocs", "security"];

/** Drops TypeBox's symbol keys and Elysia's functions: what is left is plain JSON Schema. */
function plain(schema: unknown): JsonSchema | undefined {
  if (schema === undefined || schema === null) return undefined;
  if (typeof schema === "string") return { description: `model ${schema}` };
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** `/v2/messages/:messageId` → `/v2/messages/{messageId}`; a trailing `*` becomes `{rest}`. */
export function openApiPath(path: string): { path: string; pathParams: string[] } {
  const pathParams: string[] = [];
  const converted = path
    .split("/")
    .map((part) => {
      if (part === "*") {
        pathParams.push("rest");
        return "{rest}";
      }
      if (part.startsWith(":")) {
        const name = part.slice(1).replace(/\?$/, "");
        pathParams.push(name);
        return `{${name}}`;
      }
      return part;
    })
    .join("/");
  return { path: converted, pathParams };
}

function parametersOf(route: RouteLike, pathParams: string[]): JsonSchema[] {
  const hooks = route.hooks ?? {};
  const listed = (hooks.detail as { parameters?: unknown } | undefined)?.parameters;
  const documented: JsonSchema[] = Array.isArray(listed) ? listed.flatMap((p: unknown): JsonSchema[] => { const s = plain(p); return s ? [s] : []; }) : [];
  const params = plain(hooks.params);
  const pathProps = (params?.properties ?? {}) as Record<string, JsonSchema>;
  const out: JsonSchema[] = pathParams.map((name) => ({
    name,
    in: "path",
    required: true,
    ...(name === "rest"
      ? { description: "the rest of the path, slashes included (a full URL is allowed)", schema: { type: "string" } }
      : { schema: pathProps[name] ?? { type: "string" } }),
  }));
  for (const [where, schema] of [["query", hooks.query], ["header", hooks.headers]] as const) {
    const object = plain(schema);
    const required = new Set((object?.required ?? []) as string[]);
    for (const [name, prop] of Object.entries((object?.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = prop;
      out.push({ name, in: where, required: required.has(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  // Parameters a route reads itself (publish settings, filters) are documented in its `detail`.
  const declared = new Set(out.map((p) => `${p.in} ${String(p.name).toLowerCase()}`));
  for (const p of documented) if (!declared.has(`${p.in} ${String(p.name).toLowerCase()}`)) out.push(p);
  return out;
}

function requestBodyOf(route: RouteLike, method: string): JsonSchema | undefined {
  const hooks = route.hooks ?? {};
  // A body the handler reads itself (or checks element by element) is documented in the route's
  // `detail`; `requestBody: null` there says it reads none.
  const declared = (hooks.detail as { requestBody?: unknown } | undefined)?.requestBody;
  if (declared === null) return undefined;
  const documented = plain(declared);
  if (documented) return documented;
  const body = plain(hooks.body);
  if (body) return { required: true, content: { "application/json": { schema: body } } };
  // Routes that read the raw request themselves (`parse: "none"`): the body is free-form.
  const parse = JSON.stringify(hooks.parse ?? "");
  if (parse.includes("none") && method !== "get")
    return { required: false, description: "read as raw bytes by the handler", content: { "*/*": { schema: {} } } };
  return undefined;
}

function responsesOf(route: RouteLike): Record<string, unknown> {
  const declared = plain(route.hooks?.response);
  const responses: Record<string, unknown> = {};
  // Answers are documented in the route's `detail` (a `response` schema would be checked on every
  // answer at run time).
  const documented = plain((route.hooks?.detail as { responses?: unknown } | undefined)?.responses);
  if (documented && Object.keys(documented).length > 0) {
    Object.assign(responses, documented);
  } else if (declared && Object.keys(declared).every((k) => /^\d{3}$/.test(k))) {
    for (const [status, schema] of Object.entries(declared))
      responses[status] = { description: `HTTP ${status}`, content: { "application/json": { schema } } };
  } else if (declared && Object.keys(declared).length > 0) {
    responses["200"] = { description: "Success", content: { "application/json": { schema: declared } } };
  } else {
    responses["200"] = { description: "Success" };
  }
  responses.default = { description: 'Error: `{"error": "..."}`', content: { "application/json": { schema: ERROR_REF } } };
  return responses;
}

function operationId(method: string, path: string, taken: Set<string>): string {
  const base = `${method}${path.replace(/[^A-Za-z0-9]+/g, "_")}`.replace(/_+$/, "");
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

export function buildOpenApiDocument(input: OpenApiInput): JsonSchema {
  const paths: Record<string, Record<string, Operation>> = {};
  const taken = new Set<string>();
  for (const route of input.routes) {
    const lower = route.method.toLowerCase();
    const methods = lower === "all" ? ANY_METHOD : HTTP_METHODS.has(lower) ? [lower] : [];
    const { path, pathParams } = openApiPath(route.path);
    const section = input.sectionOf(route);
    const detail = (route.hooks?.detail ?? {}) as Record<string, unknown>;
    for (const method of methods) {
      const entry = (paths[path] ??= {});
      if (entry[method]) continue; // the same route served on both ports
      const operation: Operation = {
        tags: [section.tag],
        summary: `${method.toUpperCase()} ${path}`,
        operationId: operationId(method, path, taken),
        security: section.security,
      };
      for (const field of DETAIL_FIELDS) if (detail[field] !== undefined) operation[field] = detail[field];
      const parameters = parametersOf(route, pathParams);
      if (parameters.length > 0) operation.parameters = parameters;
      const requestBody = requestBodyOf(route, method);
      if (requestBody) operation.requestBody = requestBody;
      operation.responses = responsesOf(route);
      if (section.servers) operation.servers = section.servers;
      entry[method] = operation;
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: input.title, version: input.version, description: input.description },
    servers: input.servers,
    tags: input.tags,
    paths,
    components: {
      securitySchemes: input.securitySchemes,
      schemas: {
        Error: { type: "object", required: ["error"], properties: { error: { type: "string" } } },
      },
    },
  };
}
