/**
 * (9) svcd on PostgreSQL with 1, 2 and 3 nodes, against svcd on SQLite and against pg-boss and
 * graphile-worker on the same PostgreSQL, all in one run (ratios; absolute numbers move with the
 * machine). The PostgreSQL server is the test suite's embedded one (test/helpers/postgres.ts,
 * fsync off: this measures the queues' statements, not a disk), a fresh database per row; the sink
 * is the bench's (scripts/bench/sink.ts).
 *
 * End to end, every row alike: N messages of 1 KB enqueued by a closed loop of `connections`
 * producers at once (svcd: HTTP publishes, due at once, spread over the nodes; pg-boss and
 * graphile-worker: their enqueue calls, from a Node process of their own), each delivered as a POST
 * of the body to the sink; timed from the first enqueue to the sink's last arrival. svcd's rows then
 * publish N more, delayed an hour: the publish path alone.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDatabase, testPostgres } from "../../test/helpers/postgres.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../../test/helpers/process.ts";
import { closedLoop, wallNow } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import { ensurePeers, PEER_NODE, peerVersion, PEERS } from "./peers.ts";
import type { SinkClient } from "./procs.ts";
import { machineCpuTicks, processCpuMs, serverTreeCpuMs } from "./threads.ts";

const TOKEN = "bench_pg_token";

export interface PostgresRow {
  label: string;
  /** Messages per second, first enqueue → last arrival. */
  e2eMps: number;
  delivered: number;
  /** svcd: publishes per second of messages delayed an hour; queues: enqueues per second during the end-to-end run. */
  publishRps: number;
  /** CPU µs per message delivered end to end: the PostgreSQL server's (every process), and svcd's (every node). */
  cpu?: { postgresUs?: number; svcdUs?: number; idleShare?: number };
}

export interface PostgresResults {
  messages: number;
  connections: number;
  /** server_version, fsync, synchronous_commit, full_page_writes of the server. */
  server: Record<string, string>;
  /** Versions of pg-boss, graphile-worker and the Node that runs them. */
  versions: Record<string, string>;
  sqlite?: PostgresRow;
  nodes: PostgresRow[];
  pgBoss?: PostgresRow;
  graphile?: PostgresRow;
  errors: string[];
}

/** What every row gets: the sink, N messages, and how many producers at once. */
interface Load {
  sink: SinkClient;
  messages: number;
  connections: number;
}

async function startNodes(db: string, n: number): Promise<ServerProcess[]> {
  const args = [BUN, MAIN, "--port", "0", "--db", db, "--log-level", "warn"];
  const start = () => spawnServer(args, { env: { SVC_TOKEN: TOKEN }, timeoutMs: 60_000 });
  return Promise.all(Array.from({ length: n }, start));
}

/** The PostgreSQL server's postmaster: the parent of a backend (null when svcd runs on SQLite). */
async function postmasterPid(): Promise<number> {
  const { admin } = await testPostgres();
  const rows = (await admin`SELECT pg_backend_pid() AS pid`) as Array<{ pid: number }>;
  const stat = readFileSync(`/proc/${rows[0]!.pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** CPU used from now until `done()`, per message: PostgreSQL's (when `postgres`) and the given processes'. */
function cpuMeter(postgres: number | null, pids: number[]) {
  const svcd = () => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const pg = () => (postgres === null ? 0 : serverTreeCpuMs(postgres));
  const [pg0, svcd0, machine0] = [pg(), svcd(), machineCpuTicks()];
  return (messages: number) => {
    const machine = machineCpuTicks();
    return {
      postgresUs: postgres === null ? undefined : ((pg() - pg0) * 1000) / messages,
      svcdUs: pids.length ? ((svcd() - svcd0) * 1000) / messages : undefined,
      // How much of every core nothing used meanwhile: work that waits rather than computes.
      idleShare: (machine.idle - machine0.idle) / Math.max(1, machine.total - machine0.total),
    };
  };
}

async function svcdRow(label: string, nodes: ServerProcess[], load: Load & { postgres: number | null }): Promise<PostgresRow> {
  const { sink, messages, connections } = load;
  const headers = { authorization: `Bearer ${TOKEN}`, ...BODY_HEADERS };
  const url = (i: number, path: string) => `${nodes[i % nodes.length]!.url}/v2/publish/${sink.url}/${path}`;
  await sink.reset();
  const meter = cpuMeter(load.postgres, nodes.map((n) => n.proc.pid));
  const t0 = wallNow();
  const due = await closedLoop({
    connections,
    requests: messages,
    request: (i) => ({ url: url(i, "now"), headers, body: BODY }),
  });
  if (due.ok === 0) throw new Error(`${label}: no publish accepted (${due.firstError})`);
  const stats = await sink.waitForCount(due.ok, 300_000);
  if (stats.count < due.ok) throw new Error(`${label}: ${stats.count} of ${due.ok} messages arrived`);
  const e2eMps = stats.count / ((stats.lastAt - t0) / 1000);
  const cpu = meter(stats.count);
  const delayed = await closedLoop({
    connections,
    requests: messages,
    request: (i) => ({ url: url(i, "later"), headers: { ...headers, "svc-delay": "1h" }, body: BODY }),
  });
  return { label, e2eMps, delivered: stats.count, publishRps: delayed.rps, cpu };
}

/**
 * Runs a driver (scripts/bench/<file>, copied beside the peers it imports: peers.ts) on their
 * Node 22 on a fresh database; its last stdout line is its result.
 */
async function queueRow(label: string, file: string, load: Load & { postgres: number; peers: string }): Promise<PostgresRow> {
  const { sink, messages, connections } = load;
  const db = await freshDatabase();
  await sink.reset();
  const args = ["--db", db, "--sink", sink.url, "--messages", `${messages}`, "--connections", `${connections}`];
  args.push("--concurrency", "64");
  const meter = cpuMeter(load.postgres, []);
  const proc = Bun.spawn([PEER_NODE, join(load.peers, file), ...args], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 600_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  const line = out.trim().split("\n").at(-1) ?? "";
  if (code !== 0 || !line.startsWith("{")) {
    throw new Error(`${label}: exit ${code}: ${`${line}\n${err}`.trim().slice(-1500)}`);
  }
  const r = JSON.parse(line) as { delivered: number; e2eMps: number; enqueueRps: number };
  // The driver's enqueue and delivery both ran in that window (its CPU is not the queue's own work).
  const { postgresUs, idleShare } = meter(r.delivered);
  return { label, e2eMps: r.e2eMps, delivered: r.delivered, publishRps: r.enqueueRps, cpu: { postgresUs, idleShare } };
}

async function serverSettings(): Promise<Record<string, string>> {
  const { admin } = await testPostgres();
  const out: Record<string, string> = {};
  for (const name of ["server_version", "fsync", "synchronous_commit", "full_page_writes"]) {
    const rows = (await admin`SELECT current_setting(${name}) AS v`) as Array<{ v: string }>;
    out[name] = String(rows[0]!.v);
  }
  return out;
}

const versions = (): Record<string, string> => Object.fromEntries(Object.keys(PEERS).map((name) => [name, peerVersion(name)]));

export async function measurePostgres(o: Load & { log: (text: string) => void }): Promise<PostgresResults> {
  const r: PostgresResults = {
    messages: o.messages,
    connections: o.connections,
    server: {},
    versions: versions(),
    nodes: [],
    errors: [],
  };
  const attempt = async <T>(label: string, fn: () => Promise<T>): Promise<T | undefined> => {
    o.log(`PostgreSQL comparison: ${label}`);
    try {
      const row = await fn();
      o.log(`  ${JSON.stringify(row)}`);
      return row;
    } catch (error) {
      r.errors.push(`${label}: ${(error as Error)?.message ?? error}`);
      o.log(`  FAILED ${(error as Error)?.message ?? error}`);
      return undefined;
    }
  };
  r.sqlite = await attempt("svcd on SQLite, 1 node", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svcd-bench-pg-"));
    const nodes = await startNodes(join(dir, "svcd.sqlite"), 1);
    try {
      return await svcdRow("svcd, SQLite, 1 node", nodes, { ...o, postgres: null });
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
  r.server = (await attempt("server settings", serverSettings)) ?? {};
  const postgres = await postmasterPid();
  for (const n of [1, 2, 3]) {
    const label = `svcd, PostgreSQL, ${n} node${n > 1 ? "s" : ""}`;
    const row = await attempt(label, async () => {
      const nodes = await startNodes(await freshDatabase(), n);
      try {
        return await svcdRow(label, nodes, { ...o, postgres });
      } finally {
        await Promise.all(nodes.map((node) => node.stop()));
      }
    });
    if (row) r.nodes[n - 1] = row;
  }
  const peers = await attempt("the peers pg-boss and graphile-worker", () => ensurePeers(o.log));
  r.versions = versions();
  if (!peers) return r;
  r.pgBoss = await attempt("pg-boss", () => queueRow("pg-boss", "pg-boss-run.mjs", { ...o, postgres, peers }));
  r.graphile = await attempt("graphile-worker", () => queueRow("graphile-worker", "graphile-run.mjs", { ...o, postgres, peers }));
  return r;
}
