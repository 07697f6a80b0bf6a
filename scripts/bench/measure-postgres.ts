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
 * publish N more, delayed an hour: the publish path alone. pg-boss and graphile-worker run twice:
 * with their defaults kept, and set up for throughput (--tuned; pg-boss-run.mjs and
 * graphile-run.mjs say how). Then the same rows with PostgreSQL behind a delay proxy, "in another
 * zone" (measure-remote.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDatabase, testPostgres } from "../../test/helpers/postgres.ts";
import {
  healthProbe,
  measureRemotePeers,
  measureRemoteSvcd,
  REMOTE_DB_TICKS,
  REMOTE_DELAY_MS,
  type RemoteResults,
} from "./measure-remote.ts";
import { ensurePeers, peerVersion, PEERS } from "./peers.ts";
import {
  type Attempt,
  type Load,
  postmasterPid,
  type PostgresRow,
  queueRow,
  startNodes,
  svcdRow,
} from "./postgres-rows.ts";

export type { PostgresRow };

export interface PostgresResults {
  messages: number;
  connections: number;
  /** server_version, fsync, synchronous_commit, full_page_writes of the server. */
  server: Record<string, string>;
  /** Versions of pg-boss, graphile-worker and the Node that runs them. */
  versions: Record<string, string>;
  sqlite?: PostgresRow;
  nodes: PostgresRow[];
  /** With their defaults kept (but concurrency), and set up for throughput (--tuned; the drivers say how). */
  pgBoss?: PostgresRow;
  graphile?: PostgresRow;
  pgBossTuned?: PostgresRow;
  graphileTuned?: PostgresRow;
  /** PostgreSQL behind the delay proxy (measure-remote.ts). */
  remote: RemoteResults;
  errors: string[];
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
    remote: { delayMs: REMOTE_DELAY_MS, dbTicks: REMOTE_DB_TICKS },
    errors: [],
  };
  const attempt: Attempt = async (label, fn) => {
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
      // The health probe of row 9f, here for reference: the same node's answers with PostgreSQL direct.
      const alongside = n === 1 ? await healthProbe(nodes[0]!) : undefined;
      try {
        const row = await svcdRow(label, nodes, { ...o, postgres, alongside });
        if (alongside) r.remote.healthDirect = alongside.result();
        return row;
      } finally {
        await alongside?.stop();
        await Promise.all(nodes.map((node) => node.stop()));
      }
    });
    if (row) r.nodes[n - 1] = row;
  }
  await measureRemoteSvcd(r.remote, { ...o, postgres, attempt });
  const peers = await attempt("the peers pg-boss and graphile-worker", () => ensurePeers(o.log));
  r.versions = versions();
  if (!peers) return r;
  const queue = (label: string, file: string, tuned: boolean) =>
    attempt(label, () => queueRow(label, file, { ...o, postgres, peers, tuned }));
  r.pgBoss = await queue("pg-boss", "pg-boss-run.mjs", false);
  r.graphile = await queue("graphile-worker", "graphile-run.mjs", false);
  r.pgBossTuned = await queue("pg-boss, tuned", "pg-boss-run.mjs", true);
  r.graphileTuned = await queue("graphile-worker, tuned", "graphile-run.mjs", true);
  await measureRemotePeers(r.remote, { ...o, postgres, peers, attempt });
  return r;
}
