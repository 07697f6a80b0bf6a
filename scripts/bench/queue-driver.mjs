/**
 * What the PostgreSQL queue drivers (pg-boss-run.mjs, graphile-run.mjs) share. They run on Node 22
 * (the `node` package: pg-boss and graphile-worker want it), copied beside those three in
 * .bench-peers/ (peers.ts installs them there), one driver per row, as two
 * processes like svcd's rows: this one runs the library's workers, a child of it (the same file with
 * --role produce) enqueues, as svcd's load generator publishes from a process of its own.
 *
 *   .bench-peers/node_modules/node/bin/node .bench-peers/<driver>.mjs --db postgres://… --sink http://127.0.0.1:port \
 *        [--messages 20000] [--connections 64] [--concurrency 64] [--tuned]
 *
 * --tuned: the library set up for throughput as its own docs advise (each driver says how), instead
 * of its defaults.
 *
 * End to end: from the moment the producers are told to start (their first enqueue) to the last of
 * the messages counted by the sink (its own arrival stamp, on the same cross-process wall clock as
 * the bench's svcd rows). The last line on stdout is the result as JSON.
 */
import { fork } from "node:child_process";
import { parseArgs } from "node:util";

export function options() {
  const { values } = parseArgs({
    options: {
      db: { type: "string" },
      sink: { type: "string" },
      messages: { type: "string", default: "20000" },
      connections: { type: "string", default: "64" },
      concurrency: { type: "string", default: "64" },
      role: { type: "string", default: "work" },
      tuned: { type: "boolean", default: false },
    },
  });
  if (!values.db || !values.sink) throw new Error("--db and --sink are required");
  return {
    db: values.db,
    sink: values.sink,
    messages: Number(values.messages),
    connections: Number(values.connections),
    concurrency: Number(values.concurrency),
    role: values.role,
    tuned: values.tuned,
  };
}

const wallNow = () => performance.timeOrigin + performance.now();

/** The 1 KB JSON body svcd's rows publish (scripts/bench/payload.ts builds the same one). */
export const BODY = JSON.stringify({ data: "x".repeat(1024 - 12) }).slice(0, 1024);

/** What each worker job does: POST the message's body to the sink, as svcd delivers it. */
export async function postToSink(url, body) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  await res.text();
  if (!res.ok) throw new Error(`sink answered ${res.status}`);
}

async function sinkStats(sink) {
  const res = await fetch(`${sink}/__sink/stats`);
  return await res.json();
}

/** `connections` loops, each enqueuing its next message when the previous enqueue answered. */
async function closedLoop(messages, connections, enqueue) {
  let next = 0;
  let failed = 0;
  let firstError;
  const loop = async () => {
    while (next < messages) {
      const i = next++;
      try {
        await enqueue(i);
      } catch (error) {
        failed++;
        firstError ??= String(error?.message ?? error);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  return { seconds: (performance.now() - t0) / 1000, failed, firstError };
}

/**
 * Runs a driver: `queue.prepare(o)` (schema, queue), `queue.work(o)` (the workers, in this
 * process; returns a stop function), `queue.producer(o)` in the child ({ enqueue(body), close() }).
 */
export async function runDriver(file, queue) {
  const o = options();
  if (o.role === "produce") return produce(o, queue);
  await queue.prepare(o);
  const stopWorkers = await queue.work(o);
  const stdio = ["ignore", "inherit", "inherit", "ipc"];
  const child = fork(file, [...process.argv.slice(2), "--role", "produce"], { stdio });
  const next = (type) =>
    new Promise((resolve, reject) => {
      const onMessage = (m) => m.type === type && (child.off("message", onMessage), resolve(m));
      child.on("message", onMessage);
      child.once("exit", (code) => reject(new Error(`producer exited with ${code} before "${type}"`)));
    });
  await next("ready");
  const base = (await sinkStats(o.sink)).count;
  const t0 = wallNow();
  child.send({ type: "go" });
  const produced = await next("done");
  const deadline = Date.now() + 300_000;
  let stats = await sinkStats(o.sink);
  while (stats.count - base < o.messages && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    stats = await sinkStats(o.sink);
  }
  const delivered = stats.count - base;
  const seconds = (stats.lastAt - t0) / 1000;
  await stopWorkers();
  const result = {
    messages: o.messages,
    delivered,
    seconds,
    e2eMps: delivered / seconds,
    enqueueRps: (o.messages - produced.failed) / produced.seconds,
    enqueueFailed: produced.failed,
    firstError: produced.firstError,
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(delivered >= o.messages ? 0 : 1);
}

async function produce(o, queue) {
  const producer = await queue.producer(o);
  process.send({ type: "ready" });
  await new Promise((resolve) => process.once("message", resolve));
  const run = await closedLoop(o.messages, o.connections, () => producer.enqueue(BODY));
  process.send({ type: "done", ...run });
  await producer.close();
  process.disconnect();
}
