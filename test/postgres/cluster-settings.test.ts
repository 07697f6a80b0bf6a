import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { account } from "../helpers/accounts.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Three nodes on one PostgreSQL are one service for the settings they share: two nodes changing
 * different fields of one setting at the same moment both keep their change; a change meets the
 * row as stored, not a node's older copy; limits and fault rules count and act across the nodes;
 * a flow-control key's live counters read the same from every node.
 */

const OWNER = account("settings-owner");
/** A plan with a daily limit of DAILY messages, for the limit across the nodes. */
const LIMITED = account("settings-limited", { plan: "free" });
const DAILY = 12;
const ROUNDS = 20;

let db: string;
let pg: SQL;
let nodes: ServerProcess[] = [];
let rx: Receiver;
/** Deliveries of the receiver's `/held/` paths wait until released. */
let releaseHeld: () => void = () => {};
let held = new Promise<void>((resolve) => (releaseHeld = resolve));

const startNode = (config: string) =>
  spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--config", config, "--node-timeout", "10000", "--log-level", "warn", "--workers", "2"], {
    timeoutMs: 30_000,
  });

const api = (i: number, path: string, init: RequestInit = {}, token = OWNER.token) => {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${token}`);
  return fetch(nodes[i]!.url + path, { ...init, headers });
};
const management = (i: number, path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Basic ${btoa(`${OWNER.email}:${OWNER.apiKey}`)}`);
  return fetch(nodes[i]!.url + path, { ...init, headers });
};
const json = (value: unknown): RequestInit => ({
  method: "POST",
  body: JSON.stringify(value),
  headers: { "content-type": "application/json" },
});
const ok = async (res: Promise<Response>) => {
  const r = await res;
  if (r.status !== 200 && r.status !== 201) throw new Error(`${r.status} ${await r.text()}`);
  return r;
};
/** Every node answers `read` with what `done` expects (each hears the others' changes through PostgreSQL). */
const everyNode = async (read: (i: number) => Promise<boolean>, what: string) => {
  for (const i of [0, 1, 2]) await waitUntil(() => read(i), { timeoutMs: 20_000, what: `${what} on node ${i}` });
};

beforeAll(async () => {
  db = await freshDatabase();
  pg = new SQL(db, { max: 2 });
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/held/")) await held;
    return new Response("ok");
  });
  const config = join(mkdtempSync(join(tmpdir(), "svcd-settings-")), "config.json");
  writeFileSync(config, JSON.stringify({ plans: { free: { maxMessagesPerDay: DAILY } }, accounts: [OWNER, LIMITED] }));
  // One node first: it migrates; the two others find the schema in place.
  nodes = [await startNode(config)];
  nodes.push(...(await Promise.all([startNode(config), startNode(config)])));
  // Each node counts the others at its heartbeat; the questions about live counters wait for as many.
  await waitUntil(async () => (await api(0, "/__svc/flush", { method: "POST" })).status === 409, {
    timeoutMs: 20_000,
    what: "the first node to count three",
  });
}, 90_000);

afterAll(async () => {
  releaseHeld();
  await Promise.all(nodes.map((n) => n.stop()));
  await pg.close();
  rx.stop();
});

describe("two nodes change one setting at the same moment: both changes stay", () => {
  test("a flow-control key paused on node 1 while pinned on node 2", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = `race-key-${round}`;
      await Promise.all([
        ok(api(0, `/v2/flowControl/${key}/pause`, { method: "POST" })),
        ok(api(1, `/v2/flowControl/${key}/pin?parallelism=3`, { method: "POST" })),
      ]);
      const [row] = await pg`SELECT paused, pinned_parallelism FROM flow_keys WHERE key = ${key}`;
      expect({ round, paused: Number(row.paused), pinned: Number(row.pinned_parallelism) }).toEqual({ round, paused: 1, pinned: 3 });
    }
    await everyNode(async (i) => {
      const view = (await (await api(i, `/v2/flowControl/race-key-${ROUNDS - 1}`)).json()) as Record<string, unknown>;
      return view.isPaused === true && view.parallelismMax === 3 && view.isPinnedParallelism === true;
    }, "the paused and pinned key");
  }, 120_000);

  test("a queue's parallelism set on node 1 while node 2 pauses it", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const queueName = `race-queue-${round}`;
      await ok(api(2, "/v2/queues", json({ queueName, parallelism: 1 })));
      await Promise.all([ok(api(0, "/v2/queues", json({ queueName, parallelism: 5 }))), ok(api(1, `/v2/queues/${queueName}/pause`, { method: "POST" }))]);
      const [row] = await pg`SELECT parallelism, paused FROM queues WHERE name = ${queueName}`;
      expect({ round, parallelism: Number(row.parallelism), paused: Number(row.paused) }).toEqual({ round, parallelism: 5, paused: 1 });
    }
    await everyNode(async (i) => {
      const q = (await (await api(i, `/v2/queues/race-queue-${ROUNDS - 1}`)).json()) as { parallelism: number; paused: boolean };
      return q.parallelism === 5 && q.paused;
    }, "the queue with both changes");
  }, 120_000);

  test("a URL Group's endpoints added through two nodes", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const group = `race-group-${round}`;
      await Promise.all([
        ok(api(0, `/v2/topics/${group}/endpoints`, json({ endpoints: [{ name: "a", url: `${rx.url}/a` }] }))),
        ok(api(1, `/v2/topics/${group}/endpoints`, json({ endpoints: [{ name: "b", url: `${rx.url}/b` }] }))),
      ]);
      const rows = await pg`SELECT name FROM url_group_endpoints WHERE group_name = ${group} ORDER BY name`;
      expect({ round, names: rows.map((r: { name: string }) => r.name) }).toEqual({ round, names: ["a", "b"] });
    }
  }, 120_000);

  test("signing keys rotated on two nodes at once rotate twice; every node signs with the stored keys", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const before = (await (await api(2, "/v2/keys")).json()) as { current: string; next: string };
      const answers = (await Promise.all(
        [0, 1].map(async (i) => (await ok(api(i, "/v2/keys/rotate", { method: "POST" }))).json()),
      )) as Array<{ current: string; next: string }>;
      // One rotation took the stored keys, the other took the first one's: as if one after the other.
      const [first, second] = answers[0]!.current === before.next ? answers : [answers[1]!, answers[0]!];
      expect({ round, first: first!.current, second: second!.current }).toEqual({ round, first: before.next, second: first!.next });
      const [row] = await pg`SELECT current_signing_key, next_signing_key FROM accounts WHERE id = ${OWNER.userId}`;
      expect([row.current_signing_key, row.next_signing_key]).toEqual([second!.current, second!.next]);
      await everyNode(async (i) => {
        const keys = (await (await api(i, "/v2/keys")).json()) as { current: string };
        return keys.current === second!.current;
      }, "the keys of the second rotation");
    }
  }, 180_000);

  test("a schedule replaced on two nodes at once: the revision counts both replacements", async () => {
    const scheduleId = "race-schedule";
    const create = (i: number, cron: string) =>
      ok(
        api(i, `/v2/schedules/${rx.url}/sched`, {
          method: "POST",
          body: "s",
          headers: { "Svc-Cron": cron, "Svc-Schedule-Id": scheduleId },
        }),
      );
    await create(2, "0 0 1 1 *");
    for (let round = 0; round < ROUNDS; round++) {
      const [before] = await pg`SELECT revision FROM schedules WHERE id = ${scheduleId}`;
      await Promise.all([create(0, `${round} 1 * * *`), create(1, `${round} 2 * * *`)]);
      const [after] = await pg`SELECT revision FROM schedules WHERE id = ${scheduleId}`;
      expect({ round, revisions: Number(after.revision) - Number(before.revision) }).toEqual({ round, revisions: 2 });
    }
  }, 120_000);

  test("a search index renamed on node 1 while node 2 resets its tokens", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const created = (await (await ok(management(2, "/v2/search", json({ name: `race-${round}`, region: "eu-west-1", type: "payg" })))).json()) as {
        id: string;
        token: string;
      };
      await Promise.all([
        ok(management(0, `/v2/search/${created.id}/rename`, json({ name: `renamed-${round}` }))),
        ok(management(1, `/v2/search/${created.id}/reset-password`, { method: "POST" })),
      ]);
      const [row] = await pg`SELECT name, token FROM search_indexes WHERE id = ${created.id}`;
      expect({ round, name: row.name, tokenChanged: row.token !== created.token }).toEqual({ round, name: `renamed-${round}`, tokenChanged: true });
    }
  }, 120_000);
});

describe("a change meets the row as stored", () => {
  test("a queue deleted on node 1 while node 2 pauses it stays deleted; node 2 answers 200 or 404", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const queueName = `gone-queue-${round}`;
      await ok(api(2, "/v2/queues", json({ queueName, parallelism: 2 })));
      // Node 1 has the queue in its copy before the race.
      await waitUntil(async () => (await api(1, `/v2/queues/${queueName}`)).status === 200, { what: "node 1 to see the queue" });
      const [, paused] = await Promise.all([
        ok(api(0, `/v2/queues/${queueName}`, { method: "DELETE" })),
        api(1, `/v2/queues/${queueName}/pause`, { method: "POST" }),
      ]);
      expect([200, 404]).toContain(paused.status);
      const rows = await pg`SELECT 1 FROM queues WHERE name = ${queueName}`;
      expect({ round, rows: rows.length }).toEqual({ round, rows: 0 });
    }
  }, 120_000);

  test("pausing a queue another node deleted answers 404, and brings nothing back", async () => {
    const queueName = "deleted-elsewhere";
    await ok(api(2, "/v2/queues", json({ queueName, parallelism: 4 })));
    await waitUntil(async () => (await api(1, `/v2/queues/${queueName}`)).status === 200, { what: "node 1 to see the queue" });
    await ok(api(0, `/v2/queues/${queueName}`, { method: "DELETE" }));
    // Whether or not node 1 heard of the deletion yet, the pause meets the truth.
    expect((await api(1, `/v2/queues/${queueName}/pause`, { method: "POST" })).status).toBe(404);
    expect(await pg`SELECT 1 FROM queues WHERE name = ${queueName}`).toHaveLength(0);
  });

  test("a queue updated through POST /v2/queues after another node deleted it is created anew, whole", async () => {
    const queueName = "recreated-elsewhere";
    await ok(api(2, "/v2/queues", json({ queueName, parallelism: 4, paused: true })));
    await waitUntil(async () => (await api(1, `/v2/queues/${queueName}`)).status === 200, { what: "node 1 to see the queue" });
    await ok(api(0, `/v2/queues/${queueName}`, { method: "DELETE" }));
    await ok(api(1, "/v2/queues", json({ queueName, parallelism: 2 })));
    // The new queue has what the request gave and the defaults for the rest, not the old one's pause.
    const [row] = await pg`SELECT parallelism, paused FROM queues WHERE name = ${queueName}`;
    expect([Number(row.parallelism), Number(row.paused)]).toEqual([2, 0]);
  });
});

describe("cluster-wide state", () => {
  test(`a daily limit of ${DAILY} across three nodes admits exactly ${DAILY} messages`, async () => {
    const statuses = await Promise.all(
      Array.from({ length: DAILY * 3 }, (_, i) =>
        api(i % 3, `/v2/publish/${rx.url}/daily/${i}`, { method: "POST", body: "d" }, LIMITED.token).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(DAILY);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
    const [row] = await pg`SELECT count(*) AS n FROM events WHERE account_id = ${LIMITED.userId} AND state = 'CREATED'`;
    expect(Number(row.n)).toBe(DAILY);
  });

  test("a fault rule set on node 1 acts on node 2's API answers and deliveries", async () => {
    await ok(api(0, "/__svc/faults", json({ kind: "error", status: 503, match: { route: "/v2/queues", method: "GET" } })));
    await waitUntil(async () => (await api(1, "/v2/queues")).status === 503, { timeoutMs: 20_000, what: "node 2 to fail GET /v2/queues" });
    await ok(api(0, "/__svc/faults", json({ kind: "duplicate", match: { url: `${rx.url}/twice` } })));
    // Whichever node delivers it, the delivery is doubled once every node knows the rule.
    await waitUntil(async () => ((await (await api(2, "/__svc/faults")).json()) as { rules: unknown[] }).rules.length === 2, {
      what: "node 3 to list both rules",
    });
    await waitUntil(async () => ((await (await api(1, "/__svc/faults")).json()) as { rules: unknown[] }).rules.length === 2, {
      what: "node 2 to list both rules",
    });
    const res = await ok(api(1, `/v2/publish/${rx.url}/twice`, { method: "POST", body: "t" }));
    const { messageId } = (await res.json()) as { messageId: string };
    await waitUntil(() => rx.received.filter((r) => r.headers.get("svc-message-id") === messageId).length === 2, {
      what: "the delivery twice",
    });
    await ok(api(2, "/__svc/faults", { method: "DELETE" }));
    await everyNode(async (i) => (await api(i, "/v2/queues")).status === 200, "the rules removed");
  }, 60_000);

  test("a flow-control key's waitListSize, parallelismCount and rateCount read the same from every node", async () => {
    const key = "counted-key";
    for (let i = 0; i < 5; i++) {
      await ok(
        api(i % 3, `/v2/publish/${rx.url}/held/${i}`, {
          method: "POST",
          body: "h",
          headers: { "Svc-Flow-Control-Key": key, "Svc-Flow-Control-Value": "parallelism=2, rate=3, period=1h" },
        }),
      );
    }
    // Two in flight (held by the receiver), one more started within the hour would pass the rate
    // of 3 only once one finishes: two wait for the parallelism, one more for the rate.
    await everyNode(async (i) => {
      const view = (await (await api(i, `/v2/flowControl/${key}`)).json()) as Record<string, number>;
      return view.parallelismCount === 2 && view.rateCount === 2 && view.waitListSize === 3;
    }, "two in flight, two started, three waiting");
    releaseHeld();
    held = Promise.resolve();
    await everyNode(async (i) => {
      const view = (await (await api(i, `/v2/flowControl/${key}`)).json()) as Record<string, number>;
      return view.parallelismCount === 0 && view.rateCount === 3 && view.waitListSize === 2;
    }, "three started within the hour, two waiting for the rate");
  }, 60_000);
});
