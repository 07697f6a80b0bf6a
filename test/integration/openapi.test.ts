import { afterAll, beforeAll, describe, expect, mock, test } from "bun:test";
import { buildHttpApp } from "../../src/http/app.ts";
import { openApiPath } from "../../src/openapi/generate.ts";
import { waitUntil } from "../helpers/wait.ts";

// Records every app the server builds, to compare the document with the real route table.
type App = ReturnType<typeof buildHttpApp>;
const original = buildHttpApp;
const built: App[] = [];
mock.module("../../src/http/app.ts", () => ({
  buildHttpApp: (...args: Parameters<typeof buildHttpApp>) => {
    const app = original(...args);
    built.push(app);
    return app;
  },
}));
const { startTestServer } = await import("../helpers/server.ts");
type TestServer = Awaited<ReturnType<typeof startTestServer>>;

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
let single: TestServer;
let split: TestServer;
let singleApps: App[];
let splitApps: App[];

beforeAll(async () => {
  single = await startTestServer();
  singleApps = built.splice(0);
  split = await startTestServer({ config: { managementPort: 0, dialect: "upstash" } });
  splitApps = built.splice(0);
});
afterAll(async () => {
  // Module mocks outlive the file in one `bun test` run: hand the real builder back.
  mock.module("../../src/http/app.ts", () => ({ buildHttpApp: original }));
  await Promise.all([single.stop(), split.stop()]);
});

const docOf = async (s: TestServer) => {
  const res = await fetch(`${s.url}/openapi.json`);
  expect(res.status).toBe(200);
  return (await res.json()) as any;
};

/** Structural OpenAPI 3 checks: the parts every consumer relies on. */
function checkOpenApi3(doc: any) {
  const problems: string[] = [];
  if (!/^3\.\d+\.\d+$/.test(doc.openapi)) problems.push(`openapi "${doc.openapi}" is not 3.x.y`);
  if (typeof doc.info?.title !== "string" || typeof doc.info?.version !== "string") problems.push("info needs title and version");
  if (!doc.paths || typeof doc.paths !== "object") problems.push("paths must be an object");
  const tags = new Set((doc.tags ?? []).map((t: any) => t.name));
  const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    if (!path.startsWith("/")) problems.push(`path ${path} must start with /`);
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries<any>(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!METHODS.includes(method)) problems.push(`${where}: unknown method`);
      const codes = Object.keys(op.responses ?? {});
      if (codes.length === 0) problems.push(`${where}: no responses`);
      for (const code of codes) {
        if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(code)) problems.push(`${where}: response key ${code}`);
        if (typeof op.responses[code].description !== "string") problems.push(`${where}: response ${code} has no description`);
      }
      if (operationIds.has(op.operationId)) problems.push(`${where}: duplicate operationId ${op.operationId}`);
      operationIds.add(op.operationId);
      const pathParams = (op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => p.name);
      for (const name of templated) if (!pathParams.includes(name)) problems.push(`${where}: {${name}} is not declared`);
      for (const p of op.parameters ?? []) {
        if (!["path", "query", "header", "cookie"].includes(p.in)) problems.push(`${where}: parameter ${p.name} in ${p.in}`);
        if (p.in === "path" && (p.required !== true || !templated.includes(p.name))) problems.push(`${where}: path parameter ${p.name}`);
        if (!p.schema) problems.push(`${where}: parameter ${p.name} has no schema`);
      }
      for (const t of op.tags ?? []) if (!tags.has(t)) problems.push(`${where}: undeclared tag ${t}`);
      for (const req of op.security ?? []) for (const s of Object.keys(req)) if (!schemes.has(s)) problems.push(`${where}: unknown security scheme ${s}`);
    }
  }
  // Every local $ref resolves.
  const text = JSON.stringify(doc);
  for (const [, ref] of text.matchAll(/"\$ref":"#\/([^"]+)"/g)) {
    let node: any = doc;
    for (const part of ref!.split("/")) node = node?.[part];
    if (node === undefined) problems.push(`$ref #/${ref} does not resolve`);
  }
  return problems;
}

function routesOf(apps: App[]) {
  return apps.flatMap((app) => app.routes.map((r) => ({ method: r.method.toLowerCase(), path: r.path, hooks: r.hooks as any })));
}

describe("/openapi.json", () => {
  test("is a structurally valid OpenAPI 3 document", async () => {
    for (const s of [single, split]) expect(checkOpenApi3(await docOf(s))).toEqual([]);
  });

  test("lists every route of the built apps, with both APIs and the control plane", async () => {
    for (const [s, apps] of [[single, singleApps], [split, splitApps]] as const) {
      const doc = await docOf(s);
      const routes = routesOf(apps);
      expect(routes.length).toBeGreaterThan(20);
      const missing = routes
        .filter((r) => {
          const item = doc.paths[openApiPath(r.path).path];
          return !item || (r.method === "all" ? Object.keys(item).length === 0 : !item[r.method]);
        })
        .map((r) => `${r.method} ${r.path}`);
      expect(missing).toEqual([]);
      const tags = new Set(Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((op) => op.tags[0])));
      expect(tags).toEqual(new Set(["messaging", "management", "control"]));
    }
  });

  test("request schemas are the TypeBox schemas the routes validate with; summaries come from the routes", async () => {
    const doc = await docOf(single);
    const advance = routesOf(singleApps).find((r) => r.path === "/__svc/clock/advance")!;
    const op = doc.paths["/__svc/clock/advance"].post;
    expect(op.requestBody.content["application/json"].schema).toEqual(JSON.parse(JSON.stringify(advance.hooks.body)));
    expect(op.parameters.map((p: any) => p.name).sort()).toEqual(["flush", "timeout"]);
    expect(op.summary).toBe(advance.hooks.detail.summary);
    const get = doc.paths["/v2/messages/{messageId}"].get;
    expect(get.parameters).toEqual([{ name: "messageId", in: "path", required: true, schema: { type: "string" } }]);
    expect(get.summary).toBe("Get a pending message");
    expect(doc.paths["/v2/publish/{rest}"].post.requestBody.content).toHaveProperty("*/*");
  });

  test("security per API: bearer or query token for messaging, Basic for management, none for health and docs", async () => {
    const doc = await docOf(split);
    expect(doc.components.securitySchemes.tokenQuery).toMatchObject({ in: "query", name: "qstash_token" });
    expect(doc.paths["/v2/dlq"].get.security).toEqual([{ bearerAuth: [] }, { tokenQuery: [] }]);
    const stats = doc.paths["/v2/qstash/stats/{id}"].get;
    expect(stats.tags).toEqual(["management"]);
    expect(stats.security).toEqual([{ basicAuth: [] }]);
    expect(stats.servers).toEqual([{ url: split.managementUrl }]);
    expect(doc.paths["/__svc/health"].get.security).toEqual([]);
    expect(doc.paths["/docs"].get.security).toEqual([]);
    expect(doc.paths["/__svc/reset"].post.security).toEqual([{ bearerAuth: [] }, { tokenQuery: [] }]);
    expect(doc.servers).toEqual([{ url: split.url }]);
  });
});

describe("/docs", () => {
  test("is one offline HTML page: an inline script renders /openapi.json, nothing is loaded from elsewhere", async () => {
    const res = await fetch(`${single.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("<script>");
    expect(html).toContain('fetch("/openapi.json")');
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/@import|url\(/i);
  });

  test("its script renders every operation of the document (run against a minimal DOM)", async () => {
    const html = await (await fetch(`${single.url}/docs`)).text();
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const nodes = new Map<string, { textContent: string; innerHTML: string; addEventListener(): void }>();
    const document = {
      getElementById: (id: string) => {
        if (!nodes.has(id)) nodes.set(id, { textContent: "", innerHTML: "", addEventListener() {} });
        return nodes.get(id);
      },
      querySelectorAll: () => [],
    };
    const doc = await docOf(single);
    const fakeFetch = async () => ({ json: async () => doc });
    new Function("document", "fetch", script)(document, fakeFetch);
    await waitUntil(() => nodes.get("ops")?.innerHTML || nodes.get("subtitle")?.textContent.startsWith("Could not"), { what: "the page to render" });
    const ops = nodes.get("ops")!.innerHTML;
    const count = Object.values<any>(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    expect(ops.match(/<details /g)?.length).toBe(count);
    expect(ops).toContain("/__svc/clock/advance");
    expect(nodes.get("subtitle")!.textContent).toContain("OpenAPI 3.1.0");
  });
});
