import { afterAll, beforeAll, expect, test } from "bun:test";
import { startOwnPostgres, type OwnPostgres } from "../helpers/postgres.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/raw-tcp.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Notifications sent while a node's LISTEN connection is down are lost (PostgreSQL keeps none for
 * a session that is not listening). Node B connects as a role of its own, so its reconnect can be
 * held off (NOLOGIN) while its listener is cut: node A changes a URL Group, a queue and a
 * flow-control key in that window, B provably still serves the old settings, and once B listens
 * again it must act on the new ones. Node C reaches PostgreSQL through a proxy that freezes its
 * LISTEN connection without closing it, which Bun.sql cannot notice: C must find out by itself.
 */

const TOKEN = "relisten_test_token";
let pg: OwnPostgres;
let db: string;
let admin: string;
let a: ServerProcess;
let b: ServerProcess;
let c: ServerProcess | undefined;
let proxy: TcpProxy | undefined;
let rx: Receiver;

const startNode = (url: string) =>
  spawnServer([BUN, MAIN, "--port", "0", "--db", url, "--node-timeout", "3000", "--log-level", "info", "--workers", "1"], {
    env: { SVC_TOKEN: TOKEN },
    timeoutMs: 30_000,
  });
const ok = async (n: ServerProcess, path: string, body?: unknown) =>
  expect((await api(n, path, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body) })).status).toBe(200);

const api = (n: ServerProcess, path: string, init: RequestInit = {}) => {
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  return fetch(n.url + path, { ...init, headers });
};
const json = async <T>(n: ServerProcess, path: string) => (await (await api(n, path)).json()) as T;

beforeAll(async () => {
  pg = await startOwnPostgres();
  db = await pg.createDatabase();
  admin = db.replace(/\/[^/]+$/, "/postgres");
  await pg.query(admin, "CREATE ROLE node_b LOGIN SUPERUSER PASSWORD 'node-b'");
  rx = await startReceiver(() => new Response("ok"));
  a = await startNode(db);
  b = await startNode(db.replace("postgres:svcd-test@", "node_b:node-b@"));
}, 60_000);

afterAll(async () => {
  await pg?.query(admin, "ALTER ROLE node_b LOGIN").catch(() => {});
  await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  proxy?.stop();
  rx?.stop();
  await pg?.close();
}, 30_000);

/** Node B's listening backends (Bun.sql listens on a connection of its own). */
const listenersOfB = async () => {
  const sql = "SELECT pid FROM pg_stat_activity WHERE usename = 'node_b' AND query LIKE 'LISTEN%'";
  return (await pg.query<{ pid: number }>(admin, sql)).map((r) => r.pid);
};

test("settings changed while a node's LISTEN connection was down reach that node once it listens again", async () => {
  // The settings as both nodes know them before the cut.
  await ok(a, "/v2/topics/grp/endpoints", { endpoints: [{ url: `${rx.url}/old` }] });
  await ok(a, "/v2/queues", { queueName: "q", parallelism: 1 });
  const groupOnB = async () =>
    (await json<{ endpoints?: Array<{ url: string }> }>(b, "/v2/topics/grp")).endpoints?.map((e) => e.url) ?? [];
  const parallelismOnB = async () => (await json<{ parallelism: number }>(b, "/v2/queues/q")).parallelism;
  const pausedOnB = async () => (await json<{ isPaused?: boolean }>(b, "/v2/flowControl/k")).isPaused === true;
  const known = async () => (await groupOnB()).length === 1 && (await parallelismOnB()) === 1;
  await waitUntil(known, { timeoutMs: 15_000, what: "B to know the group and queue" });
  const [listener] = await waitUntil(listenersOfB, { what: "B's listener" });

  // The cut: B may not log in again, and its listener goes.
  await pg.query(admin, "ALTER ROLE node_b NOLOGIN");
  await pg.query(admin, `SELECT pg_terminate_backend(${listener})`);
  await waitUntil(async () => (await listenersOfB()).length === 0, { what: "B's listener gone" });

  await ok(a, "/v2/topics/grp/endpoints", { endpoints: [{ url: `${rx.url}/new` }] });
  await ok(a, "/v2/queues", { queueName: "q", parallelism: 3 });
  await ok(a, "/v2/flowControl/k/pause");
  expect((await json<{ isPaused: boolean }>(a, "/v2/flowControl/k")).isPaused).toBe(true);

  // The window was real: nobody of B listened while A committed, so B holds the old settings.
  expect(await listenersOfB()).toEqual([]);
  expect(await groupOnB()).toEqual([`${rx.url}/old`]);
  expect(await parallelismOnB()).toBe(1);
  expect(await pausedOnB()).toBe(false);

  await pg.query(admin, "ALTER ROLE node_b LOGIN");
  await waitUntil(async () => (await listenersOfB()).length > 0, { timeoutMs: 30_000, what: "B listening again" });

  // B follows: its reads show the new settings, and a publish through it fans out to both endpoints.
  // (A wait that runs out is caught where the `expect` after it shows what is missing.)
  const settled = { timeoutMs: 15_000 };
  await waitUntil(async () => (await groupOnB()).length === 2, settled).catch(() => {});
  expect(await groupOnB()).toEqual([`${rx.url}/old`, `${rx.url}/new`]);
  await waitUntil(async () => (await parallelismOnB()) === 3, settled).catch(() => {});
  expect(await parallelismOnB()).toBe(3);
  await waitUntil(pausedOnB, settled).catch(() => {});
  expect(await pausedOnB()).toBe(true);

  await ok(b, "/v2/publish/grp", "fan");
  await waitUntil(() => rx.received.some((r) => r.path === "/new"), { ...settled, what: "the publish through B at the new endpoint" });
  expect(b.output()).toContain("listening for the other nodes again");
}, 90_000);

test("a node whose LISTEN connection went silently dead finds out by itself, listens again and takes what it missed", async () => {
  const pgPort = Number(new URL(db).port);
  proxy = startTcpProxy(pgPort);
  c = await startNode(db.replace(`:${pgPort}/`, `:${proxy.port}/`));
  await ok(a, "/v2/queues", { queueName: "q2", parallelism: 1 });
  const parallelismOnC = async () => (await json<{ parallelism?: number }>(c!, "/v2/queues/q2")).parallelism;
  await waitUntil(async () => (await parallelismOnC()) === 1, { timeoutMs: 15_000, what: "C to know the queue" });
  const listenersOfC = async () => {
    const sql = "SELECT pid, client_port FROM pg_stat_activity WHERE query LIKE 'LISTEN%'";
    const rows = await pg.query<{ pid: number; client_port: number }>(admin, sql);
    return rows.filter((r) => proxy!.upstreamPorts().includes(r.client_port));
  };
  const [listener] = await waitUntil(listenersOfC, { what: "C's listener" });
  proxy.freeze(listener!.client_port);

  await ok(a, "/v2/queues", { queueName: "q2", parallelism: 4 });
  // The window was real: A's notification reached C's connection and was dropped there.
  await waitUntil(() => proxy!.dropped().includes("svcd_config"), { what: "A's notification dropped on C's connection" });

  await waitUntil(async () => (await parallelismOnC()) === 4, { timeoutMs: 20_000 }).catch(() => {});
  expect(await parallelismOnC()).toBe(4);
  expect(c.output()).toContain("no longer hears its own notifications");
  // C listens on a new connection, which hears A's next change.
  expect((await listenersOfC()).map((r) => r.pid)).not.toContain(listener!.pid);
  await ok(a, "/v2/queues", { queueName: "q2", parallelism: 2 });
  await waitUntil(async () => (await parallelismOnC()) === 2, { timeoutMs: 15_000 }).catch(() => {});
  expect(await parallelismOnC()).toBe(2);
}, 90_000);
