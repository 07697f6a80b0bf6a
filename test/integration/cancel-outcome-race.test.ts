import { afterAll, beforeAll, expect, test } from "bun:test";
import { whileCommitsFail } from "../helpers/commit-failures.ts";
import { expectIdleAndConsistent, logsOf } from "../helpers/inspect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * A cancel takes a message's attempt in flight away inside its write, so that an answer recorded
 * in the same transaction finds nothing to record. When the cancel is then not stored (here its
 * CANCELED entry is refused, every time), the attempt is the message's again, and so must be its
 * answer, even one that arrived while the cancel was being written: a cancel and the recording of
 * the answers often share a transaction (the HTTP request and the recorder's timer in one turn of
 * the event loop). Each message is then delivered, as if no cancel had been asked for.
 */

const COUNT = 20;
/** Rounds of the race: one round can miss it (a cancel and the recording of answers in one transaction). */
const ROUNDS = 3;
let s: TestServer;
let rx: Receiver;
let release: () => void = () => {};
let held = Promise.resolve();

beforeAll(async () => {
  s = await startTestServer();
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/held/")) await held;
    return new Response("ok");
  });
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const lastState = async (id: string) => (await logsOf(s, id)).at(-1)?.state;

/** COUNT messages whose deliveries are held, then refused cancels of them while their answers come back. */
async function round(r: number, statuses: Map<number, number>): Promise<string[]> {
  held = new Promise<void>((resolve) => (release = resolve));
  const ids: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const res = await s.api(`/v2/publish/${rx.url}/held/${r}/${i}`, { method: "POST", body: String(i) });
    expect(res.status).toBe(200);
    ids.push(((await res.json()) as { messageId: string }).messageId);
  }
  await rx.waitFor((r + 1) * COUNT, { match: (req) => req.path.startsWith("/held/") });
  let done = false;
  // Cancels of every message, again and again, while their answers come back and are recorded.
  const cancelling = Array.from({ length: 16 }, async (_, k) => {
    for (let n = k; !done; n++) {
      const res = await s.api(`/v2/messages/${ids[n % COUNT]}`, { method: "DELETE" });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  });
  release();
  const deadline = Date.now() + 20_000;
  try {
    while (Date.now() < deadline && !(await Promise.all(ids.map(lastState))).every((state) => state === "DELIVERED"));
  } finally {
    done = true;
    await Promise.all(cancelling);
  }
  return ids;
}

test("answers that arrive while cancels of their messages are refused are recorded: every message is delivered", async () => {
  const refusedCancels = { sqlite: "NEW.state = 'CANCELED'", postgres: "NEW.state = 'CANCELED'" };
  const statuses = new Map<number, number>();
  const ids: string[] = [];
  await whileCommitsFail(s, refusedCancels, async () => {
    for (let r = 0; r < ROUNDS; r++) ids.push(...(await round(r, statuses)));
  });
  // The cancels were all refused (503) until the messages ended (404 then); none was stored.
  expect([...statuses.keys()].every((status) => status === 503 || status === 404)).toBe(true);
  expect(statuses.get(503)).toBeGreaterThan(0);
  expect(await Promise.all(ids.map(lastState))).toEqual(ids.map(() => "DELIVERED"));
  await expectIdleAndConsistent(s);
}, 90_000);
