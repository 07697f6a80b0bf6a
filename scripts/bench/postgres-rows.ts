/**
 * One row of the PostgreSQL comparison (measure-postgres.ts says what a row measures): svcd's
 * nodes on a database, or a queue's driver (pg-boss-run.mjs, graphile-run.mjs) on one.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freshDatabase, testPostgres } from "../../test/helpers/postgres.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../../test/helpers/process.ts";
import { closedLoop, wallNow } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import { PEER_NODE } from "./peers.ts";
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
  /**
   * CPU µs per message delivered end to end: the PostgreSQL server's (every process), svcd's (every
   * node), the delay proxy's (when the row runs through it).
   */
  cpu?: { postgresUs?: number; svcdUs?: number; proxyUs?: number; idleShare?: number };
}

/** What every row gets: the sink, N messages, and how many producers at once. */
export interface Load {
  sink: SinkClient;
  messages: number;
  connections: number;
}

/** Runs one row, logs it; a failure is logged and kept in the results' errors, and the rest goes on. */
export type Attempt = <T>(label: string, fn: () => Promise<T>) => Promise<T | undefined>;

/** `n` svcd nodes on the database at `db`, with `extraArgs` (e.g. `--db-ticks 6`) beside the bench's own. */
export async function startNodes(db: string, n: number, extraArgs: string[] = []): Promise<ServerProcess[]> {
  const args = [BUN, MAIN, "--port", "0", "--db", db, "--log-level", "warn", ...extraArgs];
  const start = () => spawnServer(args, { env: { SVC_TOKEN: TOKEN }, timeoutMs: 60_000 });
  return Promise.all(Array.from({ length: n }, start));
}

/** The PostgreSQL server's postmaster: the parent of a backend. */
export async function postmasterPid(): Promise<number> {
  const { admin } = await testPostgres();
  const rows = (await admin`SELECT pg_backend_pid() AS pid`) as Array<{ pid: number }>;
  const stat = readFileSync(`/proc/${rows[0]!.pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/**
 * CPU used from now until `done()`, per message: PostgreSQL's (when `postgres`), the given svcd
 * processes' and the delay proxy's (when `proxy`).
 */
function cpuMeter(postgres: number | null, pids: number[], proxy?: number) {
  const svcd = () => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
  const pg = () => (postgres === null ? 0 : serverTreeCpuMs(postgres));
  const px = () => (proxy === undefined ? 0 : processCpuMs(proxy));
  const [pg0, svcd0, px0, machine0] = [pg(), svcd(), px(), machineCpuTicks()];
  return (messages: number) => {
    const machine = machineCpuTicks();
    return {
      postgresUs: postgres === null ? undefined : ((pg() - pg0) * 1000) / messages,
      svcdUs: pids.length ? ((svcd() - svcd0) * 1000) / messages : undefined,
      proxyUs: proxy === undefined ? undefined : ((px() - px0) * 1000) / messages,
      // How much of every core nothing used meanwhile: work that waits rather than computes.
      idleShare: (machine.idle - machine0.idle) / Math.max(1, machine.total - machine0.total),
    };
  };
}

/** Something run alongside a row's end-to-end window (the health probe of measure-remote.ts). */
export interface Alongside {
  begin(): Promise<void>;
  end(): Promise<void>;
}

export async function svcdRow(
  label: string,
  nodes: ServerProcess[],
  load: Load & { postgres: number | null; alongside?: Alongside; proxy?: number },
): Promise<PostgresRow> {
  const { sink, messages, connections } = load;
  const headers = { authorization: `Bearer ${TOKEN}`, ...BODY_HEADERS };
  const url = (i: number, path: string) => `${nodes[i % nodes.length]!.url}/v2/publish/${sink.url}/${path}`;
  await sink.reset();
  await load.alongside?.begin();
  const meter = cpuMeter(load.postgres, nodes.map((n) => n.proc.pid), load.proxy);
  const t0 = wallNow();
  const due = await closedLoop({
    connections,
    requests: messages,
    request: (i) => ({ url: url(i, "now"), headers, body: BODY }),
  });
  if (due.ok === 0) throw new Error(`${label}: no publish accepted (${due.firstError})`);
  const stats = await sink.waitForCount(due.ok, 300_000);
  const cpu = meter(stats.count);
  await load.alongside?.end();
  if (stats.count < due.ok) throw new Error(`${label}: ${stats.count} of ${due.ok} messages arrived`);
  const e2eMps = stats.count / ((stats.lastAt - t0) / 1000);
  const delayed = await closedLoop({
    connections,
    requests: messages,
    request: (i) => ({ url: url(i, "later"), headers: { ...headers, "svc-delay": "1h" }, body: BODY }),
  });
  return { label, e2eMps, delivered: stats.count, publishRps: delayed.rps, cpu };
}

/**
 * Runs a driver (scripts/bench/<file>, copied beside the peers it imports: peers.ts) on their
 * Node 22 on a fresh database (reached at `reach(url)`: through the delay proxy, whose pid is
 * `proxy`); its last stdout line is its result. `tuned`: the driver's setup for throughput instead of its defaults.
 */
export async function queueRow(
  label: string,
  file: string,
  load: Load & { postgres: number; peers: string; tuned?: boolean; reach?: (url: string) => string; proxy?: number },
): Promise<PostgresRow> {
  const { sink, messages, connections } = load;
  const db = (load.reach ?? ((url) => url))(await freshDatabase());
  await sink.reset();
  const args = ["--db", db, "--sink", sink.url, "--messages", `${messages}`, "--connections", `${connections}`];
  args.push("--concurrency", "64", ...(load.tuned ? ["--tuned"] : []));
  const meter = cpuMeter(load.postgres, [], load.proxy);
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
  const { postgresUs, proxyUs, idleShare } = meter(r.delivered);
  const cpu = { postgresUs, proxyUs, idleShare };
  return { label, e2eMps: r.e2eMps, delivered: r.delivered, publishRps: r.enqueueRps, cpu };
}
