import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * `/mcp` driven by the official MCP SDK's own client over HTTP, against a real svcd (manual clock)
 * and a real local receiver: what an agent sees and what its calls do to real deliveries.
 */
let svc: TestServer;
let receiver: Receiver;
let client: Client;

/** A connected client; `auth` picks how the token travels (or none). */
async function connect(auth: "bearer" | "query" | "none" = "bearer", token = svc.token) {
  const url = new URL(`${svc.url}/mcp`);
  if (auth === "query") url.searchParams.set("svc_token", token);
  const headers: Record<string, string> = auth === "bearer" ? { authorization: `Bearer ${token}` } : {};
  const c = new Client({ name: "svcd-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return c;
}

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };
const parsed = (result: unknown) => JSON.parse((result as Result).content[0]!.text!);

/** Calls a tool that must succeed and returns its JSON answer. */
async function call(name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as Result;
  if (result.isError) throw new Error(`${name} failed: ${result.content[0]?.text}`);
  return parsed(result);
}

beforeAll(async () => {
  [svc, receiver] = await Promise.all([startTestServer({ config: { clock: "manual" } }), startReceiver()]);
  client = await connect();
});
afterAll(async () => {
  await client?.close();
  await Promise.all([svc?.stop(), receiver?.stop()]);
});

describe("/mcp", () => {
  test("lists every tool, each with an input schema; only the tools that read are marked read-only", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [
      "list_logs", "list_messages", "get_message", "list_dlq", "retry_dlq", "delete_dlq", "list_workflow_runs",
      "get_workflow_run", "notify_event", "publish", "pause_schedule", "resume_schedule", "pause_queue", "resume_queue",
      "pause_flow_control_key", "resume_flow_control_key", "advance_clock", "flush", "reset", "rerun_workflow_run",
    ])
      expect(byName.has(name)).toBe(true);
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name).sort();
    expect(readOnly).toEqual([
      "get_message", "get_workflow_run", "list_dlq", "list_flow_control_keys", "list_logs", "list_messages",
      "list_queues", "list_schedules", "list_workflow_runs",
    ]);
    for (const t of tools) expect(t.inputSchema.type).toBe("object");
    expect(byName.get("publish")!.inputSchema.required).toEqual(["destination"]);
    expect(byName.get("reset")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  test("publish delivers to a real receiver; the logs and the message's timeline show it", async () => {
    const { messageId } = await call("publish", { destination: `${receiver.url}/hook`, body: "hello", headers: { "Svc-Label": "mcp" } });
    expect(messageId).toMatch(/^msg_/);
    expect(await call("flush")).toEqual({ idle: true });
    const [delivered] = await receiver.waitFor(1, { match: (r) => r.path === "/hook" });
    expect(delivered!.text).toBe("hello");

    const { logs } = await call("list_logs", { messageId });
    expect(logs.map((e: { state: string }) => e.state)).toContain("DELIVERED");
    const { messages } = await call("list_messages", { label: "mcp" });
    expect(messages).toEqual([expect.objectContaining({ messageId, state: "DELIVERED" })]);
    const detail = await call("get_message", { messageId });
    expect(detail.timeline[0].state).toBe("CREATED");
    expect(detail.timeline.at(-1).state).toBe("DELIVERED");
  });

  test("a failed message lands in the DLQ; retry_dlq re-delivers it and empties the DLQ", async () => {
    let fail = true;
    receiver.setHandler((r) => (r.path === "/flaky" && fail ? new Response("down", { status: 500 }) : new Response("ok")));
    const { messageId } = await call("publish", { destination: `${receiver.url}/flaky`, body: "again", headers: { "Svc-Retries": "0" } });
    await call("flush");
    const { messages } = await call("list_dlq", { messageId });
    expect(messages).toHaveLength(1);
    expect(messages[0].responseStatus).toBe(500);

    fail = false;
    const retried = await call("retry_dlq", { dlqId: messages[0].dlqId });
    expect(retried.messageId).not.toBe(messageId);
    await call("flush");
    const attempts = await receiver.waitFor(2, { match: (r) => r.path === "/flaky" });
    expect(attempts.map((r) => r.text)).toEqual(["again", "again"]);
    expect((await call("list_dlq", { messageId })).messages).toEqual([]);
    expect((await call("get_message", { messageId: retried.messageId })).timeline.at(-1).state).toBe("DELIVERED");
  });

  test("advance_clock moves the manual clock: a delayed message is delivered only then", async () => {
    const { messageId } = await call("publish", { destination: `${receiver.url}/later`, body: "soon", headers: { "Svc-Delay": "60s" } });
    await call("flush");
    expect(receiver.received.filter((r) => r.path === "/later")).toHaveLength(0);
    const moved = await call("advance_clock", { ms: 60_000, flush: true });
    expect(moved).toMatchObject({ mode: "manual" });
    expect(moved.timersFired).toBeGreaterThan(0);
    await receiver.waitFor(1, { match: (r) => r.path === "/later" });
    expect((await call("get_message", { messageId })).timeline.at(-1).state).toBe("DELIVERED");
  });

  test("pause and resume act on the same queues as the HTTP API", async () => {
    const create = { method: "POST", body: JSON.stringify({ queueName: "q1" }), headers: { "content-type": "application/json" } };
    expect((await svc.api("/v2/queues", create)).status).toBe(200);
    await call("pause_queue", { queueName: "q1" });
    expect(await (await svc.api("/v2/queues/q1")).json()).toMatchObject({ paused: true });
    await call("resume_queue", { queueName: "q1" });
    expect((await call("list_queues")).find((q: { name: string }) => q.name === "q1")).toMatchObject({ paused: false });
  });

  test("delete_dlq, schedule and flow-control pauses, workflow runs and events", async () => {
    receiver.setHandler((r) => (r.path === "/dead" ? new Response("no", { status: 500 }) : new Response("ok")));
    const { messageId } = await call("publish", { destination: `${receiver.url}/dead`, headers: { "Svc-Retries": "0" } });
    await call("flush");
    const [entry] = (await call("list_dlq", { messageId })).messages;
    expect(await call("delete_dlq", { dlqId: entry.dlqId })).toEqual({ deleted: 1 });
    expect((await call("list_dlq", { messageId })).messages).toEqual([]);

    const schedule = await svc.api(`/v2/schedules/${receiver.url}/tick`, { method: "POST", headers: { "Svc-Cron": "0 * * * *" } });
    const { scheduleId } = (await schedule.json()) as { scheduleId: string };
    await call("pause_schedule", { scheduleId });
    expect(await (await svc.api(`/v2/schedules/${scheduleId}`)).json()).toMatchObject({ isPaused: true });
    await call("resume_schedule", { scheduleId });
    expect((await call("list_schedules")).find((x: { scheduleId: string }) => x.scheduleId === scheduleId)).toMatchObject({ isPaused: false });

    await call("publish", { destination: `${receiver.url}/keyed`, headers: { "Svc-Flow-Control-Key": "k1", "Svc-Flow-Control-Value": "parallelism=1" } });
    await call("pause_flow_control_key", { flowControlKey: "k1" });
    expect(await (await svc.api("/v2/flowControl/k1")).json()).toMatchObject({ isPaused: true });
    await call("resume_flow_control_key", { flowControlKey: "k1" });
    expect(await (await svc.api("/v2/flowControl/k1")).json()).toMatchObject({ isPaused: false });

    expect(await call("notify_event", { eventId: "nobody-waits", data: "x" })).toEqual([]);
    expect((await call("list_workflow_runs")).runs).toEqual([]);
    const run = (await client.callTool({ name: "get_workflow_run", arguments: { workflowRunId: "wfr_none" } })) as Result;
    expect(parsed(run)).toEqual({ error: "workflow run wfr_none not found", status: 404 });
  });

  test("a bad argument is an error result, whether the schema or the service refuses it", async () => {
    const negative = (await client.callTool({ name: "advance_clock", arguments: { ms: -5 } })) as Result;
    expect(negative.isError).toBe(true);
    expect(negative.content[0]!.text).toContain("ms");

    const state = (await client.callTool({ name: "list_logs", arguments: { state: "BOGUS" } })) as Result;
    expect(state.isError).toBe(true);
    expect(parsed(state)).toMatchObject({ status: 400, error: expect.stringContaining('invalid state "BOGUS"') });

    const missing = (await client.callTool({ name: "retry_dlq", arguments: { dlqId: "nope" } })) as Result;
    expect(missing.isError).toBe(true);
    expect(parsed(missing)).toEqual({ error: "DLQ message nope not found", status: 404 });
  });

  test("refused without the token (401 JSON); the token query parameter works as on the messaging API", async () => {
    await expect(connect("none")).rejects.toMatchObject({ code: 401, message: expect.stringContaining("Unauthorized") });
    await expect(connect("bearer", "wrong-token")).rejects.toMatchObject({ code: 401 });
    const raw = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({ error: "Unauthorized" });

    const viaQuery = await connect("query");
    expect((await viaQuery.listTools()).tools.length).toBeGreaterThan(15);
    await viaQuery.close();
    expect((await svc.api("/mcp")).status).toBe(405);
  });

  test("reset wipes the account's logs", async () => {
    expect((await call("list_logs")).logs.length).toBeGreaterThan(0);
    expect((await call("reset")).parts).toContain("logs");
    expect((await call("list_logs")).logs).toEqual([]);
  });
});
