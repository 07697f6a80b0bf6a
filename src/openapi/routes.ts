import { Elysia } from "elysia";
import pkg from "../../package.json" with { type: "json" };
import type { Dialect } from "../core/dialect.ts";
import { apiDoc, jsonContent } from "./doc.ts";
import { DOCS_PAGE } from "./docs-page.ts";
import { buildOpenApiDocument, type RouteLike, type RouteSection, type SecurityRequirement } from "./generate.ts";

interface HasRoutes {
  routes: RouteLike[];
}

/** The route plugins of each API; the document lists them, these docs routes included. */
export interface ApiSources {
  messaging: HasRoutes[];
  management: HasRoutes[];
  control: HasRoutes[];
  dialect: Dialect;
  /** Base URL of the management API when it listens on its own port, else null. */
  managementUrl: () => string | null;
}

const key = (r: RouteLike) => `${r.method} ${r.path}`;

function sectionsFrom(sources: ApiSources): (route: RouteLike) => RouteSection {
  const messaging = new Set(sources.messaging.flatMap((p) => p.routes.map(key)));
  const management = new Set(sources.management.flatMap((p) => p.routes.map(key)));
  const bearer: SecurityRequirement[] = [{ bearerAuth: [] }, { tokenQuery: [] }];
  const managementUrl = sources.managementUrl();
  return (route) => {
    if (management.has(key(route)))
      return { tag: "management", security: [{ basicAuth: [] }], ...(managementUrl ? { servers: [{ url: managementUrl }] } : {}) };
    if (messaging.has(key(route))) return { tag: "messaging", security: bearer };
    return { tag: "control", security: bearer };
  };
}

/** `GET /openapi.json` and `GET /docs`, generated from the served routes on each request. */
export function openApiRoutes(sources: ApiSources) {
  const d = sources.dialect;
  const document = (origin: string) => {
    const seen = new Set<string>();
    const plugins = [...sources.control, docs, ...sources.messaging, ...sources.management];
    const routes = plugins.flatMap((p) => p.routes).filter((r) => !seen.has(key(r)) && seen.add(key(r)));
    return buildOpenApiDocument({
      title: "svcd",
      version: pkg.version,
      description:
        `Durable HTTP messaging API and management API (dialect "${d.name}": configuration headers ${d.prefix}-*). ` +
        `Control plane for tests under /__svc/.`,
      servers: [{ url: origin }],
      tags: [
        { name: "messaging", description: `Publish, deliver, inspect: Authorization: Bearer <token> or ?${d.tokenQueryParam}=<token>.` },
        { name: "management", description: "Search and vector indexes, usage statistics: HTTP Basic with email and API key." },
        { name: "control", description: "Test-double control plane (/__svc/*) and these docs." },
      ],
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "the account's messaging token" },
        tokenQuery: { type: "apiKey", in: "query", name: d.tokenQueryParam, description: "the messaging token as a query parameter" },
        basicAuth: { type: "http", scheme: "basic", description: "the account's email and API key" },
      },
      routes,
      sectionOf: sectionsFrom(sources),
    });
  };
  const docs: HasRoutes = new Elysia()
    .get("/openapi.json", ({ request }) => document(new URL(request.url).origin), {
      detail: apiDoc({
        summary: "This API description (OpenAPI 3.1)",
        security: [],
        responses: { 200: jsonContent({ type: "object", description: "an OpenAPI 3.1 document" }, "this document") },
      }),
    })
    .get("/docs", () => new Response(DOCS_PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), {
      detail: apiDoc({
        summary: "Offline docs page rendering /openapi.json",
        security: [],
        responses: { 200: { description: "one HTML page", content: { "text/html": { schema: { type: "string" } } } } },
      }),
    });
  return docs as Elysia;
}
