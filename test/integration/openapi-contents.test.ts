import { expect, test, beforeAll, afterAll } from "bun:test";
import { readFileSync } from "node:fs";
import { WORKFLOW_CANCEL_FILTERS, WORKFLOW_DLQ_FILTERS, WORKFLOW_LOG_FILTERS } from "../../src/filters/filter.ts";
import { EMPTY_OK } from "../../src/messages/api-schemas.ts";
import { PUBLISH_SETTINGS } from "../../src/messages/publish-headers.ts";
import { answerFits, schemaProblems } from "../helpers/json-schema.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * What the OpenAPI document says beyond the route table: every publish setting, every filter,
 * an answer schema for every operation of the messaging, management and control APIs; and the
 * real answers of the server fit the schemas it documents.
 */
let s: TestServer;
let rx: Receiver;
let doc: any;
beforeAll(async () => {
  s = await startTestServer({ config: { retryDelayScale: 0 } });
  rx = await startReceiver((req) => new Response("no", { status: req.path.startsWith("/fail") ? 500 : 200 }));
  doc = await (await fetch(`${s.url}/openapi.json`)).json();
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const params = (op: any, where: string) => (op.parameters ?? []).filter((p: any) => p.in === where).map((p: any) => p.name);

test("publish, enqueue and schedules document every setting the publish parser reads", () => {
  // Every suffix options.ts reads, found in its source: the documentation cannot fall behind.
  const source = readFileSync(new URL("../../src/messages/options.ts", import.meta.url), "utf8");
  const read = new Set<string>();
  for (const [, suffix] of source.matchAll(/\(src, "([A-Z][A-Za-z-]*)"/g)) read.add(suffix!);
  for (const [, suffix] of source.matchAll(/src\.get\("([A-Z][A-Za-z-]*)"\)/g)) read.add(suffix!);
  for (const [, suffix] of source.matchAll(/src\.prefixed\("([A-Z][A-Za-z-]*)"\)/g)) read.add(`${suffix}{Name}`);
  for (const [, suffix] of source.matchAll(/`\$\{kind\}-([A-Z][A-Za-z-]*)`/g))
    for (const kind of ["Callback", "Failure-Callback"]) read.add(`${kind}-${suffix}${suffix!.endsWith("-") ? "{Name}" : ""}`);
  for (const kind of ["Callback", "Failure-Callback"]) if (source.includes(`"${kind}"`)) read.add(kind);
  const documented = new Set(PUBLISH_SETTINGS.map((p) => p.suffix));
  expect([...read].filter((suffix) => !documented.has(suffix)).sort()).toEqual([]);

  const publish = doc.paths["/v2/publish/{rest}"].post;
  const headers = params(publish, "header");
  for (const setting of PUBLISH_SETTINGS) expect(headers).toContain(`Svc-${setting.suffix}`);
  expect(params(doc.paths["/v2/enqueue/{rest}"].post, "header")).toContain("Svc-Retries");
  expect(params(doc.paths["/v2/schedules/{rest}"].post, "header")).toEqual(expect.arrayContaining(["Svc-Cron", "Svc-Schedule-Id", "Svc-Callback"]));
  expect(publish.requestBody.content).toHaveProperty("*/*");
});

test("listings and bulk operations document their filters, count and cursor", () => {
  const logs = params(doc.paths["/v2/logs"].get, "query");
  expect(logs).toEqual(expect.arrayContaining(["messageId", "state", "url", "host", "path", "label", "fromDate", "toDate", "count", "cursor"]));
  const dlq = params(doc.paths["/v2/dlq"].get, "query");
  expect(dlq).toEqual(expect.arrayContaining(["responseStatus", "dlqIds", "queueName", "cursor"]));
  const cancel = doc.paths["/v2/messages"].delete;
  expect(params(cancel, "query")).toEqual(expect.arrayContaining(["messageIds", "topicName", "count", "cursor"]));
  expect(Object.keys(cancel.requestBody.content["application/json"].schema.properties)).toContain("messageIds");

  for (const path of ["/v2/workflows/logs", "/v2/workflows/events"])
    expect(params(doc.paths[path].get, "query")).toEqual(expect.arrayContaining([...WORKFLOW_LOG_FILTERS, "count", "cursor"]));
  expect(params(doc.paths["/v2/workflows/runs"].delete, "query")).toEqual(
    expect.arrayContaining([...WORKFLOW_CANCEL_FILTERS, "workflowRunIds", "workflowUrlExactMatch", "count"]),
  );
  expect(params(doc.paths["/v2/workflows/dlq"].get, "query")).toEqual(expect.arrayContaining([...WORKFLOW_DLQ_FILTERS, "count", "cursor"]));
  for (const [path, method] of [["/v2/workflows/dlq/resume", "post"], ["/v2/workflows/dlq/restart", "post"], ["/v2/workflows/dlq", "delete"]] as const) {
    const op = doc.paths[path][method];
    expect(params(op, "query")).toEqual(expect.arrayContaining([...WORKFLOW_DLQ_FILTERS, "count", "cursor"]));
    expect(Object.keys(op.requestBody.content["application/json"].schema.properties)).toEqual(expect.arrayContaining([...WORKFLOW_DLQ_FILTERS]));
  }
  // Bodies the workflow routes read themselves are raw bytes; a single resume reads none.
  for (const [path, method] of [["/v2/notify/{id}", "post"], ["/v2/trigger/{rest}", "post"], ["/v2/workflows/runs/{runId}", "delete"]] as const)
    expect(Object.keys(doc.paths[path][method].requestBody.content)).toEqual(["*/*"]);
  expect(doc.paths["/v2/workflows/dlq/resume/{dlqId}"].post.requestBody).toBeUndefined();
  // A run's states, not a message's: the listing refuses message states.
  const state = doc.paths["/v2/workflows/logs"].get.parameters.find((p: any) => p.name === "state");
  expect(state.description).toContain("RUN_STARTED");
});

test("every operation of the messaging, management and control APIs documents its answer", () => {
  const missing: string[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      // The generator's placeholder ("Success", no content) is what an undocumented operation gets.
      const answers = Object.entries<any>(op.responses).filter(([code]) => /^[23]\d\d$/.test(code));
      if (answers.length === 0 || answers.some(([, r]) => r.description === "Success" && !r.content))
        missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  expect(missing).toEqual([]);
});

test("every messaging operation, the workflow routes' included, documents a 2XX answer with its content's schema", () => {
  const undocumented: string[] = [];
  let operations = 0;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!op.tags.includes("messaging")) continue;
      operations++;
      const answers = Object.entries<any>(op.responses).filter(([code]) => /^[23]\d\d$/.test(code));
      // A schema for each media type an answer has; an answer without a body says so (or redirects: `GET /`).
      const documented = answers.some(([code, r]) =>
        r.content
          ? Object.values<any>(r.content).every((c) => c.schema && Object.keys(c.schema).length > 0)
          : r.description === EMPTY_OK.description || (code.startsWith("3") && r.description !== "Success"),
      );
      if (!documented) undocumented.push(`${method.toUpperCase()} ${path}`);
    }
  }
  expect(operations).toBeGreaterThan(60);
  expect(undocumented).toEqual([]);
});

const expectFits = (path: string, method: string, res: Response) => answerFits(doc, path, method, res);

test("the server's real answers fit the schemas it documents", async () => {
  // The checker bites: a missing required field or a wrong type is a problem.
  expect(schemaProblems(doc.paths["/v2/keys"].get.responses["200"].content["application/json"].schema, { current: 1 })).toEqual([
    "/next: is missing",
    "/current: is integer, not string",
  ]);
  const published = await s.api(`/v2/publish/${rx.url}/ok`, { method: "POST", body: "hello", headers: { "Svc-Label": "a,b" } });
  await expectFits("/v2/publish/{rest}", "post", published);
  const later = await s.api(`/v2/publish/${rx.url}/later`, { method: "POST", body: "x", headers: { "Svc-Delay": "1h", "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "rate=1" } });
  const { messageId: laterId } = (await later.json()) as { messageId: string };
  await expectFits("/v2/messages/{messageId}", "get", await s.api(`/v2/messages/${laterId}`));
  const failing = await s.api(`/v2/publish/${rx.url}/fail`, { method: "POST", body: "x", headers: { "Svc-Retries": "0" } });
  const { messageId: failingId } = (await failing.json()) as { messageId: string };
  await s.api("/__svc/flush", { method: "POST" });

  await expectFits("/v2/logs", "get", await s.api("/v2/logs"));
  await expectFits("/v2/events", "get", await s.api("/v2/events"));
  const page = await expectFits("/v2/dlq", "get", await s.api(`/v2/dlq?messageId=${failingId}`));
  const dlqId = (page as { messages: Array<{ dlqId: string }> }).messages[0]!.dlqId;
  await expectFits("/v2/dlq/{dlqId}", "get", await s.api(`/v2/dlq/${dlqId}`));
  await expectFits("/v2/keys", "get", await s.api("/v2/keys"));
  await expectFits("/v2/flowControl", "get", await s.api("/v2/flowControl"));
  await expectFits("/v2/globalParallelism", "get", await s.api("/v2/globalParallelism"));
  await s.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "q", parallelism: 2 }), headers: { "content-type": "application/json" } });
  await expectFits("/v2/queues", "get", await s.api("/v2/queues"));
  await s.api("/v2/topics/g/endpoints", { method: "POST", body: JSON.stringify({ endpoints: [{ url: `${rx.url}/g` }] }), headers: { "content-type": "application/json" } });
  await expectFits("/v2/topics/{name}", "get", await s.api("/v2/topics/g"));
  const created = await s.api(`/v2/schedules/${rx.url}/cron`, { method: "POST", headers: { "Svc-Cron": "0 0 * * *" } });
  const { scheduleId } = await expectFits("/v2/schedules/{rest}", "post", created);
  await expectFits("/v2/schedules/{scheduleId}", "get", await s.api(`/v2/schedules/${scheduleId}`));
  const batch = await s.api("/v2/batch", {
    method: "POST",
    body: JSON.stringify([{ destination: `${rx.url}/b` }, { destination: "not a url" }]),
    headers: { "content-type": "application/json" },
  });
  await expectFits("/v2/batch", "post", batch);
  await expectFits("/v2/messages", "delete", await s.api(`/v2/messages?messageIds=${laterId}`, { method: "DELETE" }));
  await expectFits("/__svc/clock", "get", await s.api("/__svc/clock"));
  await expectFits("/__svc/health", "get", await fetch(`${s.url}/__svc/health`));

  const index = await s.mgmt("/v2/search", { method: "POST", body: JSON.stringify({ name: "docs", region: "eu-west-1", type: "payg" }), headers: { "content-type": "application/json" } });
  const { id } = await expectFits("/v2/search", "post", index);
  await expectFits("/v2/search", "get", await s.mgmt("/v2/search"));
  await expectFits("/v2/search/{id}/rename", "post", await s.mgmt(`/v2/search/${id}/rename`, { method: "POST", body: JSON.stringify({ name: "docs2" }), headers: { "content-type": "application/json" } }));
  const user = s.config.defaultAccount.userId;
  await expectFits("/v2/svc/stats/{id}", "get", await s.mgmt(`/v2/svc/stats/${user}`));
  const vector = await s.mgmt("/v2/vector/index", {
    method: "POST",
    body: JSON.stringify({ name: "v", region: "eu-west-1", similarity_function: "COSINE", dimension_count: 3 }),
    headers: { "content-type": "application/json" },
  });
  const { id: vectorId } = await expectFits("/v2/vector/index", "post", vector);
  await expectFits("/v2/vector/index/{id}/stats", "get", await s.mgmt(`/v2/vector/index/${vectorId}/stats`));
});
