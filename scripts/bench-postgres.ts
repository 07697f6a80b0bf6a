/**
 * PostgreSQL engine: publish and end-to-end delivery with 1, 2 and 3 svcd nodes on one database,
 * against one node on SQLite measured in the same run (ratios; absolute numbers move with the
 * machine). The PostgreSQL server is the test suite's embedded one (fsync off: this measures svcd's
 * statements, not a disk). Every node, the database server and the load generator share the
 * machine's cores.
 *
 *   bun scripts/bench-postgres.ts [--messages 6000] [--connections 48]
 */
import { parseArgs } from "node:util";
import { closedLoop } from "./bench/load.ts";
import { freshDatabase, stopTestPostgres } from "../test/helpers/postgres.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../test/helpers/process.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const { values } = parseArgs({ options: { messages: { type: "string", default: "6000" }, connections: { type: "string", default: "48" } } });
const MESSAGES = Number(values.messages);
const CONNECTIONS = Number(values.connections);
const TOKEN = "bench_pg_token";

let received = 0;
const sink = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (received++, new Response("ok")) });
const sinkUrl = `http://127.0.0.1:${sink.port}`;

async function startNodes(db: string, n: number): Promise<ServerProcess[]> {
  const first = await spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "warn"], { env: { SVC_TOKEN: TOKEN }, timeoutMs: 60_000 });
  const rest = await Promise.all(
    Array.from({ length: n - 1 }, () => spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "warn"], { env: { SVC_TOKEN: TOKEN }, timeoutMs: 60_000 })),
  );
  return [first, ...rest];
}

interface Result {
  label: string;
  publishRps: number;
  e2eMps: number;
}

/** Publishes MESSAGES across the nodes (delayed an hour: the publish path alone), then MESSAGES due at once, timed until all arrive. */
async function measure(label: string, nodes: ServerProcess[]): Promise<Result> {
  const body = new TextEncoder().encode(JSON.stringify({ payload: "x".repeat(1000) }));
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const delayed = await closedLoop({
    connections: CONNECTIONS,
    requests: MESSAGES,
    request: (i) => ({ url: `${nodes[i % nodes.length]!.url}/v2/publish/${sinkUrl}/later`, method: "POST", headers: { ...headers, "svc-delay": "1h" }, body }),
  });
  received = 0;
  const t0 = performance.now();
  const due = await closedLoop({
    connections: CONNECTIONS,
    requests: MESSAGES,
    request: (i) => ({ url: `${nodes[i % nodes.length]!.url}/v2/publish/${sinkUrl}/now`, method: "POST", headers, body }),
  });
  const deadline = Date.now() + 120_000;
  while (received < due.ok && Date.now() < deadline) await Bun.sleep(20);
  const seconds = (performance.now() - t0) / 1000;
  const result = { label, publishRps: delayed.rps, e2eMps: received / seconds };
  process.stderr.write(`${label}: publish ${result.publishRps.toFixed(0)} req/s, end to end ${result.e2eMps.toFixed(0)} msg/s (${received}/${due.ok} delivered)\n`);
  return result;
}

const results: Result[] = [];
{
  const dir = mkdtempSync(join(tmpdir(), "svcd-bench-pg-"));
  const nodes = await startNodes(join(dir, "svcd.sqlite"), 1);
  results.push(await measure("SQLite, 1 node (baseline)", nodes));
  await Promise.all(nodes.map((n) => n.stop()));
  rmSync(dir, { recursive: true, force: true });
}
for (const n of [1, 2, 3]) {
  const nodes = await startNodes(await freshDatabase(), n);
  results.push(await measure(`PostgreSQL, ${n} node${n > 1 ? "s" : ""}`, nodes));
  await Promise.all(nodes.map((node) => node.stop()));
}
sink.stop(true);
await stopTestPostgres();

const base = results[0]!;
console.log(`| Setup | Publish req/s | ratio | End to end msg/s | ratio |`);
console.log(`|---|---|---|---|---|`);
for (const r of results)
  console.log(`| ${r.label} | ${r.publishRps.toFixed(0)} | ${(r.publishRps / base.publishRps).toFixed(2)} | ${r.e2eMps.toFixed(0)} | ${(r.e2eMps / base.e2eMps).toFixed(2)} |`);
process.exit(0);
