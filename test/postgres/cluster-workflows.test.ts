import { Client as QStashClient, Receiver } from "@upstash/qstash";
import { Client as WorkflowClient, serve, type RouteFunction } from "@upstash/workflow";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { parseExposition } from "../helpers/prometheus.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Workflow runs on three svcd nodes sharing one PostgreSQL, behind a round-robin balancer as a
 * deployment has them: the official SDK's requests (trigger, every step's publish, notify, logs)
 * go to the nodes in turn and any node delivers, so each run's steps pass through several nodes.
 * Runs stay consistent: every step runs once, in order, the results are right, the logs read the
 * same from every node; and a node killed with SIGKILL mid-run loses no run.
 */

const TOKEN = "cluster_workflow_token";
let db: string;
const nodes: Array<ServerProcess | null> = [];
let balancer: ReturnType<typeof Bun.serve>;
let app: ReturnType<typeof Bun.serve>;
let client: WorkflowClient;
const routes = new Map<string, (request: Request) => Promise<Response>>();
/** How often each step's function ran, by run and step. */
const ran = new Map<string, number>();
const count = (runId: string, step: string) => ran.set(`${runId}/${step}`, (ran.get(`${runId}/${step}`) ?? 0) + 1);
/** Step "two" of every run waits for this (resolved but while the kill test holds it). */
let stepTwoHeld: Promise<void> = Promise.resolve();

const startNode = () =>
  spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--dialect", "upstash", "--node-timeout", "1500", "--log-level", "error", "--workers", "1"], {
    env: { SVC_TOKEN: TOKEN },
    timeoutMs: 30_000,
  });

/** Forwards each request to the next live node; a node that does not answer is skipped. */
let turn = 0;
async function forward(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  for (let tries = 0; tries < nodes.length * 2; tries++) {
    const n = nodes[turn++ % nodes.length];
    if (!n) continue;
    try {
      const res = await fetch(n.url + url.pathname + url.search, { method: request.method, headers: request.headers, body });
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    } catch {
      // killed under this request: the next node takes it
    }
  }
  return new Response(JSON.stringify({ error: "no node answered" }), { status: 502 });
}

function workflow<T>(path: string, fn: RouteFunction<T, unknown>, qstash: QStashClient, receiver: Receiver): string {
  const { handler } = serve<T, Request, Response, unknown>(fn, { qstashClient: qstash, receiver, env: {} });
  routes.set(path, handler);
  return `http://127.0.0.1:${app.port}${path}`;
}

const sequential = () => async (context: Parameters<RouteFunction<{ n: number }, unknown>>[0]) => {
  let total = context.requestPayload.n;
  for (const step of ["one", "two", "three", "four"]) {
    total = await context.run(step, async () => {
      count(context.workflowRunId, step);
      // Held while a node is killed: its deliveries of this step are under way when it dies.
      if (step === "two") await stepTwoHeld;
      return total * 2;
    });
  }
  const [a, b] = await Promise.all([
    context.run("left", () => (count(context.workflowRunId, "left"), total + 1)),
    context.run("right", () => (count(context.workflowRunId, "right"), total + 2)),
  ]);
  const { eventData } = await context.waitForEvent("event", `go-${context.workflowRunId}`, { timeout: "1h" });
  return await context.run("last", () => (count(context.workflowRunId, "last"), a + b + Number(eventData)));
};

let url: string;

beforeAll(async () => {
  db = await freshDatabase();
  // One node first: it migrates; the two others find the schema in place.
  nodes.push(await startNode());
  nodes.push(...(await Promise.all([startNode(), startNode()])));
  balancer = Bun.serve({ port: 0, hostname: "127.0.0.1", idleTimeout: 0, fetch: forward });
  const base = `http://127.0.0.1:${balancer.port}`;
  const keys = (await (await fetch(`${base}/v2/keys`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { current: string; next: string };
  const qstash = new QStashClient({ baseUrl: base, token: TOKEN, retry: false });
  client = new WorkflowClient({ baseUrl: base, token: TOKEN, retry: false });
  const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  app = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch: (request) => routes.get(new URL(request.url).pathname)?.(request) ?? new Response("no such route", { status: 404 }),
  });
  url = workflow("/wf/across", sequential(), qstash, receiver);
}, 90_000);

afterAll(async () => {
  balancer?.stop(true);
  app?.stop(true);
  await Promise.all(nodes.map((n) => n?.stop()));
});

/**
 * Triggers `n` runs (calling `whileRunning` once every one of them is in step "two", held there
 * until it returns), lets each reach its wait, notifies each through the balancer, and returns the
 * run ids once all have finished.
 */
async function runThrough(n: number, whileRunning?: () => Promise<void>): Promise<string[]> {
  let release = () => {};
  if (whileRunning) stepTwoHeld = new Promise<void>((resolve) => (release = resolve));
  const runIds = await Promise.all(
    Array.from({ length: n }, async (_, i) => (await client.trigger({ url, body: { n: i + 1 } })).workflowRunId),
  );
  if (whileRunning) {
    await waitUntil(() => runIds.every((id) => ran.has(`${id}/two`)), { timeoutMs: 30_000, what: "every run in step two" });
    await whileRunning();
    release();
  }
  // A waiter stored through one node is seen by every node.
  await waitUntil(async () => (await Promise.all(runIds.map(async (id) => (await client.getWaiters({ eventId: `go-${id}` })).length))).every((k) => k === 1), {
    timeoutMs: 60_000,
    what: "every run waiting for its event",
  });
  for (const id of runIds) {
    // Notified through whichever node the balancer picks; a notify racing a restart is sent again.
    await waitUntil(async () => (await client.notify({ eventId: `go-${id}`, eventData: "1000" })).length === 1, {
      timeoutMs: 20_000,
      what: `the notify of ${id}`,
    });
  }
  await waitUntil(
    async () => {
      const states = await Promise.all(runIds.map(async (id) => (await client.logs({ workflowRunId: id })).runs[0]?.workflowState));
      return states.every((s) => s === "RUN_SUCCESS");
    },
    { timeoutMs: 60_000, what: "every run to finish" },
  );
  return runIds;
}

/** The result a run of payload `n` ends with (as JSON text): n·16, two branches of it, and the event's 1000. */
const expected = (n: number) => String(2 * n * 16 + 3 + 1000);

test("runs whose steps pass through three nodes run every step once, in order, with the right result; the logs read the same from every node", async () => {
  const before = await deliveredPerNode();
  const runIds = await runThrough(6);
  for (const [i, id] of runIds.entries()) {
    const [run] = (await client.logs({ workflowRunId: id })).runs;
    expect(run!.workflowRunResponse).toBe(expected(i + 1));
    for (const step of ["one", "two", "three", "four", "left", "right", "last"]) expect(ran.get(`${id}/${step}`)).toBe(1);
  }
  // Every node delivered some of them.
  const after = await deliveredPerNode();
  const perNode = after.map((n, i) => n - before[i]!);
  expect(perNode.filter((n) => n > 0).length).toBe(3);
  // The same log from every node.
  const views = await Promise.all(
    nodes.map(async (n) => {
      const own = new WorkflowClient({ baseUrl: n!.url, token: TOKEN, retry: false });
      const { runs } = await own.logs({ workflowRunId: runIds[0] });
      return runs.map((r) => ({ state: r.workflowState, result: r.workflowRunResponse, steps: r.steps.map((g) => g.steps.map((s) => s.stepName)) }));
    }),
  );
  expect(views[0]![0]!.steps.flat()).toEqual(["init", "one", "two", "three", "four", "left", "right", "event", "last"]);
  expect(views[1]).toEqual(views[0]!);
  expect(views[2]).toEqual(views[0]!);
}, 120_000);

test("a node killed (SIGKILL) while runs deliver their steps: the others take its work over, every run finishes with the right result", async () => {
  const runIds = await runThrough(6, async () => {
    nodes[1]!.proc.kill("SIGKILL");
    await nodes[1]!.proc.exited;
    nodes[1] = null;
  });
  nodes[1] = await startNode();
  for (const [i, id] of runIds.entries()) {
    const [run] = (await client.logs({ workflowRunId: id })).runs;
    expect(run!.workflowRunResponse).toBe(expected(i + 1));
    // At least once: a step under way on the killed node runs again elsewhere.
    for (const step of ["one", "two", "three", "four", "left", "right", "last"]) expect(ran.get(`${id}/${step}`)).toBeGreaterThanOrEqual(1);
  }
}, 150_000);

/** Messages each node has delivered so far (its own Prometheus counter). */
async function deliveredPerNode(): Promise<number[]> {
  return Promise.all(
    nodes.map(async (n) => {
      const res = await fetch(`${n!.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
      return parseExposition(await res.text())
        .samples.filter((x) => x.name === "svcd_messages_delivered_total")
        .reduce((sum, x) => sum + x.value, 0);
    }),
  );
}
