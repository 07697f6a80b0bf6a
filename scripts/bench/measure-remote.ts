/**
 * (9e–9g) PostgreSQL "in another zone": the comparison's rows again with the database behind the
 * delay proxy (delay-proxy.ts, 1 ms each way, so 2 ms per round trip), in a process of its own so
 * that the bench's load generator never delays its chunks. svcd on 1 node with its default flags
 * (against the direct 1-node row of the same run) and with `--db-ticks 6`; pg-boss and
 * graphile-worker with their throughput setups (--tuned). During svcd's default run, a liveness
 * probe (health-probe.ts, a process of its own) asks `GET /__svc/health` every 10 ms, one request
 * at a time, from the first publish until the sink has every message (and, for reference, during
 * the direct 1-node row of measure-postgres.ts).
 */
import { join } from "node:path";
import { freshDatabase, testPostgres } from "../../test/helpers/postgres.ts";
import { BUN, spawnServer, type ServerProcess } from "../../test/helpers/process.ts";
import {
  type Alongside,
  type Attempt,
  type Load,
  type PostgresRow,
  queueRow,
  startNodes,
  svcdRow,
} from "./postgres-rows.ts";
import { percentile } from "./stats.ts";

export const REMOTE_DELAY_MS = 1;
/** `--db-ticks` of the extra svcd row (svcd's default is 3). */
export const REMOTE_DB_TICKS = 6;
const PROBE_INTERVAL_MS = 10;
const HERE = new URL(".", import.meta.url).pathname;

export interface HealthProbe {
  intervalMs: number;
  answered: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  firstError?: string;
}

export interface RemoteResults {
  /** Added by the proxy each way. */
  delayMs: number;
  /** `--db-ticks` of `svcdTicks`. */
  dbTicks: number;
  /** svcd, 1 node, default flags; then with --db-ticks REMOTE_DB_TICKS. */
  svcd?: PostgresRow;
  svcdTicks?: PostgresRow;
  /** The probe during `svcd`'s run, and during the direct 1-node row's (for reference). */
  health?: HealthProbe;
  healthDirect?: HealthProbe;
  /** pg-boss and graphile-worker set up for throughput (--tuned). */
  pgBoss?: PostgresRow;
  graphile?: PostgresRow;
}

interface Proxy {
  pid: number;
  /** The same database URL, through the proxy. */
  reach(url: string): string;
  stop(): Promise<void>;
}

/** The delay proxy as a process of its own, in front of the comparison's PostgreSQL. */
async function startProxy(): Promise<Proxy> {
  const target = new URL((await testPostgres()).baseUrl);
  const args = [target.hostname, target.port, `${REMOTE_DELAY_MS}`];
  const proc = Bun.spawn([BUN, join(HERE, "delay-proxy.ts"), ...args], { stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let text = "";
  let port: string | undefined;
  while (!port) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the delay proxy exited (${await proc.exited}): ${text}`);
    text += new TextDecoder().decode(value);
    port = /listening on tcp:\/\/[^:]+:(\d+)/.exec(text)?.[1];
  }
  reader.releaseLock();
  return {
    pid: proc.pid,
    reach(url) {
      const via = new URL(url);
      via.port = port;
      return via.href;
    },
    async stop() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

export type Probe = Alongside & { result(): HealthProbe; stop(): Promise<void> };

/** The probe process, asking `node`'s health every PROBE_INTERVAL_MS while `begin`…`end`. */
export async function healthProbe(node: ServerProcess): Promise<Probe> {
  const args = [BUN, join(HERE, "health-probe.ts"), `${node.url}/__svc/health`, `${PROBE_INTERVAL_MS}`];
  const probe = await spawnServer(args);
  let result: HealthProbe | undefined;
  return {
    async begin() {
      await fetch(`${probe.url}/begin`, { method: "POST" }).then((res) => res.text());
    },
    async end() {
      const r = (await (await fetch(`${probe.url}/end`, { method: "POST" })).json()) as {
        latencies: number[];
        failed: number;
        firstError?: string;
      };
      const at = (p: number) => percentile(r.latencies, p);
      result = {
        intervalMs: PROBE_INTERVAL_MS,
        answered: r.latencies.length,
        failed: r.failed,
        p50: at(50),
        p99: at(99),
        max: Math.max(...r.latencies),
        firstError: r.firstError,
      };
    },
    result() {
      if (!result) throw new Error("the health probe never ended");
      return result;
    },
    stop: async () => void (await probe.stop("SIGKILL")),
  };
}

/** svcd on one node through the proxy, default flags (with the health probe), then --db-ticks 6. */
export async function measureRemoteSvcd(
  remote: RemoteResults,
  o: Load & { postgres: number; attempt: Attempt; log: (text: string) => void },
): Promise<void> {
  const proxy = await o.attempt("the delay proxy", startProxy);
  if (!proxy) return;
  const away = `PostgreSQL ${2 * REMOTE_DELAY_MS} ms away`;
  const run = async (label: string, extraArgs: string[], probe: boolean) =>
    await o.attempt(label, async () => {
      const nodes = await startNodes(proxy.reach(await freshDatabase()), 1, extraArgs);
      const alongside = probe ? await healthProbe(nodes[0]!) : undefined;
      try {
        const row = await svcdRow(label, nodes, { ...o, alongside, proxy: proxy.pid });
        if (alongside) remote.health = alongside.result();
        return row;
      } finally {
        await alongside?.stop();
        await Promise.all(nodes.map((node) => node.stop()));
      }
    });
  try {
    remote.svcd = await run(`svcd, ${away}, 1 node`, [], true);
    if (remote.health) o.log(`  health probe: ${JSON.stringify(remote.health)}`);
    const ticks = ["--db-ticks", `${REMOTE_DB_TICKS}`];
    remote.svcdTicks = await run(`svcd, ${away}, 1 node, --db-ticks ${REMOTE_DB_TICKS}`, ticks, false);
  } finally {
    await proxy.stop();
  }
}

/** pg-boss and graphile-worker, tuned, through the proxy. */
export async function measureRemotePeers(
  remote: RemoteResults,
  o: Load & { postgres: number; peers: string; attempt: Attempt },
): Promise<void> {
  const proxy = await o.attempt("the delay proxy", startProxy);
  if (!proxy) return;
  const away = `PostgreSQL ${2 * REMOTE_DELAY_MS} ms away`;
  const queue = (label: string, file: string) =>
    o.attempt(label, () => queueRow(label, file, { ...o, tuned: true, reach: proxy.reach, proxy: proxy.pid }));
  try {
    remote.pgBoss = await queue(`pg-boss, tuned, ${away}`, "pg-boss-run.mjs");
    remote.graphile = await queue(`graphile-worker, tuned, ${away}`, "graphile-run.mjs");
  } finally {
    await proxy.stop();
  }
}
