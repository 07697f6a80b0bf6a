import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { jsonBody } from "../helpers/accounts.ts";
import { waitForState } from "../helpers/inspect.ts";
import { parseExposition } from "../helpers/prometheus.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Someone else holds a queue's row locked (an operator's open transaction, another node's slow
 * one) past the engine's lock_timeout: the tick promoting that queue's messages waits for it, and
 * nothing else does. Publishes to another queue and the health probe keep answering meanwhile;
 * the waiting publish runs again when its wait times out, and answers 200 once the row is free.
 */

let s: TestServer;
let rx: Receiver;
let outside: SQL;

beforeAll(async () => {
  s = await startTestServer({ engine: "postgres" });
  rx = await startReceiver();
  outside = new SQL(s.config.dbPath!);
});
afterAll(async () => {
  await outside.close();
  rx.stop();
  await s.stop();
});

const enqueue = (queue: string, body: string) => s.api(`/v2/enqueue/${queue}/${rx.url}/${queue}`, { method: "POST", body });
const retriedWrites = async () => {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
  return parseExposition(await res.text()).value("svcd_storage_writes_retried_total");
};
/** Backends of the server's database waiting for a lock right now. */
const waitingForLocks = async () => {
  const [row] = await outside<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row!.n;
};

test("a queue's row locked from outside holds only the publishes to that queue", async () => {
  for (const queue of ["held", "free"]) expect((await enqueue(queue, "first")).status).toBe(200);
  await waitUntil(() => rx.received.length === 2);

  const locker = await outside.reserve();
  const answers: string[] = [];
  let held: Promise<unknown>;
  try {
    await locker`BEGIN`;
    await locker`SELECT 1 FROM queues WHERE name = 'held' FOR UPDATE`;

    held = enqueue("held", "second").then((res) => answers.push(`held ${res.status}`));
    await waitUntil(async () => (await waitingForLocks()) > 0);

    for (let i = 0; i < 5; i++) {
      answers.push(`free ${(await enqueue("free", String(i))).status}`);
      answers.push(`health ${(await fetch(`${s.url}/__svc/health`)).status}`);
    }
    // The publish waited past lock_timeout and went again in a later transaction: still unanswered.
    await waitUntil(async () => (await retriedWrites()) >= 1, { timeoutMs: 15_000 });
    expect(answers).toHaveLength(10);
    expect(answers.every((a) => a.endsWith(" 200"))).toBe(true);
  } finally {
    // Whatever happened above, the row goes free (the next test must not wait for it).
    await locker`COMMIT`;
    locker.release();
  }
  await held;
  expect(answers.at(-1)).toBe("held 200");
  // Every message of both queues is delivered: the held queue's second one too, once its row is free.
  const delivered = (queue: string) => rx.received.filter((r) => r.path === `/${queue}`).length;
  await waitUntil(() => delivered("held") === 2 && delivered("free") === 6);
}, 30_000);

/**
 * As many writes waiting for a held row as `node` runs ticks at once, each in a tick of its own;
 * once their waits ran out, each runs again in a tick of its own, and would fill every tick. A new
 * write still gets one: it answers while every write of the burst waits.
 */
async function burstLeavesATick(node: TestServer, ticks: number): Promise<void> {
  const db = new SQL(node.config.dbPath!);
  const send = (queue: string, body: string) => node.api(`/v2/enqueue/${queue}/${rx.url}/${queue}`, { method: "POST", body });
  const waiting = async () => {
    const [row] = await db<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    return row!.n;
  };
  const retried = async () => {
    const res = await fetch(`${node.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
    return parseExposition(await res.text()).value("svcd_storage_writes_retried_total");
  };
  // The queues exist and are idle: no delivery's ending waits for the held row (its promotion would).
  for (const queue of ["burst", "free"]) {
    const res = await send(queue, "first");
    expect(res.status).toBe(200);
    await waitForState(node, ((await res.json()) as { messageId: string }).messageId, ["DELIVERED"]);
  }
  const locker = await db.reserve();
  const answers: string[] = [];
  const sent: Array<Promise<unknown>> = [];
  const before = await retried();
  try {
    await locker`BEGIN`;
    await locker`SELECT 1 FROM queues WHERE name = 'burst' FOR UPDATE`;
    for (let i = 0; i < ticks; i++) {
      sent.push(send("burst", `again ${i}`).then((res) => answers.push(`burst ${res.status}`)));
      await waitUntil(async () => (await waiting()) > i, { what: `write ${i} waiting for the row` });
    }
    await waitUntil(async () => (await retried()) - before >= ticks && (await waiting()) >= ticks, {
      timeoutMs: 15_000,
      what: "the writes running again, each waiting for the row",
    });
    answers.push(`free ${(await send("free", "beside the burst")).status}`);
    expect(answers).toEqual(["free 200"]);
  } finally {
    await locker`COMMIT`;
    locker.release();
  }
  await Promise.all(sent);
  await db.close();
  expect(answers).toEqual(["free 200", ...Array(ticks).fill("burst 200")]);
}

test("writes running again after their lock waits ran out leave a tick for new writes", () => burstLeavesATick(s, 3), 40_000);

test("with one tick at a time, writes running again and new writes take turns", async () => {
  const one = await startTestServer({ engine: "postgres", config: { dbTicks: 1 } });
  try {
    await burstLeavesATick(one, 1);
  } finally {
    await one.stop();
  }
}, 40_000);

test("a write whose statement runs past statement_timeout runs again, and its caller gets 200", async () => {
  expect((await s.api("/v2/queues", jsonBody("POST", { queueName: "slow", parallelism: 1 }))).status).toBe(200);
  // The first UPDATE of the queue's row sleeps past the writes' statement_timeout (2.5 s); a
  // sequence, which no rollback undoes, lets every later one through at once.
  await outside.unsafe(`
    CREATE SEQUENCE slow_once;
    CREATE FUNCTION slow_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF nextval('slow_once') = 1 THEN PERFORM pg_sleep(3); END IF; RETURN NEW; END $$;
    CREATE TRIGGER slow_once BEFORE UPDATE ON queues FOR EACH ROW EXECUTE FUNCTION slow_once();`);
  const before = await retriedWrites();
  try {
    expect((await s.api("/v2/queues/slow/pause", { method: "POST" })).status).toBe(200);
    expect(await retriedWrites()).toBeGreaterThan(before);
    const queue = (await (await s.api("/v2/queues/slow")).json()) as { paused: boolean };
    expect(queue.paused).toBe(true);
  } finally {
    await outside.unsafe("DROP TRIGGER slow_once ON queues; DROP FUNCTION slow_once(); DROP SEQUENCE slow_once;");
  }
}, 30_000);
