import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { ManualClock } from "../../src/core/clock.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * A cron schedule on two nodes sharing one PostgreSQL fires once per slot, whichever node's timer
 * fires first: each node arms its own timer for the schedule's next slot, and only one of them
 * takes the slot. Each node runs on a manual clock of its own, so a test decides which timers fire
 * and when (one node's alone, or both in the same turn of the event loop), not the wall clock.
 */

const MINUTE = 60_000;
/** Ten seconds past a minute: the schedule's first slot is 50 s later. */
const T0 = Date.UTC(2026, 10, 28, 12, 0, 10);
const FIRST_SLOT = T0 - 10_000 + MINUTE;

let pg: SQL;
let rx: Receiver;
const clocks = [new ManualClock(T0), new ManualClock(T0)];
let nodes: TestServer[] = [];

beforeAll(async () => {
  const url = await freshDatabase();
  pg = new SQL(url);
  rx = await startReceiver(() => new Response("ok"));
  // One node first: it migrates; the other finds the schema in place.
  nodes = [await startTestServer({ engine: "postgres", config: { dbPath: url }, clock: clocks[0] })];
  nodes.push(await startTestServer({ engine: "postgres", config: { dbPath: url }, clock: clocks[1] }));
}, 60_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await pg.close();
  rx.stop();
});

/** Moves the clocks of `which` nodes to `atMs`, in that order, in one turn of the event loop. */
function advance(which: number[], atMs: number): void {
  for (const i of which) clocks[i]!.advanceTo(atMs);
}

/** Both nodes have done what their fired timers started: triggers written or given up. */
async function quiet(): Promise<void> {
  await waitUntil(
    async () => {
      await Promise.all(clocks.map((c) => c.settled()));
      return nodes.every((n) => n.ctx.commit.pendingWrites === 0);
    },
    { what: "both nodes done with their triggers" },
  );
}

/** The minute slot of each message the schedule created, from the CREATED entries every node wrote. */
async function slotsOf(scheduleId: string): Promise<number[]> {
  const rows: Array<{ time: string | number }> =
    await pg`SELECT time FROM events WHERE state = 'CREATED' AND schedule_id = ${scheduleId} ORDER BY time`;
  return rows.map((r) => Math.floor(Number(r.time) / MINUTE));
}

test("a cron schedule fires once per slot: one node's timer alone, or both nodes' in the same turn", async () => {
  const res = await nodes[0]!.api(`/v2/schedules/${rx.url}/cron`, {
    method: "POST",
    body: "tick",
    headers: { "Svc-Cron": "* * * * *" },
  });
  expect(res.status).toBe(200);
  const { scheduleId } = (await res.json()) as { scheduleId: string };
  const cronDeliveries = () => rx.received.filter((r) => r.path === "/cron");

  // The first slot on the second node alone: it learnt of the schedule from the first node (a timer
  // armed after its clock passed the slot fires at once), created the message and delivered it.
  advance([1], FIRST_SLOT + 1000);
  await rx.waitFor(1, { match: (r) => r.path === "/cron", timeoutMs: 20_000 });
  await quiet();
  expect(await slotsOf(scheduleId)).toEqual([FIRST_SLOT / MINUTE]);

  // Then each slot with both nodes' timers firing in the same turn, in either order.
  const rounds = 6;
  for (let k = 1; k <= rounds; k++) {
    const slot = FIRST_SLOT + k * MINUTE;
    advance(k % 2 ? [0, 1] : [1, 0], slot + 1000);
    await rx.waitFor(1 + k, { match: (r) => r.path === "/cron", timeoutMs: 20_000 });
    await quiet();
  }
  // And one slot on the first node alone (it armed its next slot itself).
  const last = FIRST_SLOT + (rounds + 1) * MINUTE;
  advance([0], last + 1000);
  await rx.waitFor(rounds + 2, { match: (r) => r.path === "/cron", timeoutMs: 20_000 });
  await quiet();

  const expected = Array.from({ length: rounds + 2 }, (_, k) => FIRST_SLOT / MINUTE + k);
  expect(await slotsOf(scheduleId)).toEqual(expected);
  // Each slot's message was delivered once.
  const ids = cronDeliveries().map((r) => r.headers.get("svc-message-id"));
  expect(new Set(ids).size).toBe(rounds + 2);
  expect(ids).toHaveLength(rounds + 2);
}, 90_000);
