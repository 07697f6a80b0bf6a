import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectIdleAndConsistent, waitForState } from "../helpers/inspect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Transactions of the group commit failing at random while messages are published, delivered,
 * retried and cancelled: a failed transaction refuses every write in it (a publish or a cancel
 * answers 503, claims and outcomes are written again), and what was acknowledged holds. On both
 * engines: a trigger fails one log entry in 60, which fails the transaction writing it.
 */

let s: TestServer;
let rx: Receiver;

beforeAll(async () => {
  s = await startTestServer({ config: { retryDelayScale: 0.001 } });
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/chaos/flaky") && Math.random() < 0.5) return new Response("not now", { status: 500 });
    // Still under way when the test cancels it.
    if (req.path.startsWith("/chaos/slow")) await Bun.sleep(30);
    return new Response("ok");
  });
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

/** Makes one log entry in `oneIn` fail its INSERT (and so its transaction); returns what stops it. */
async function failSomeCommits(oneIn: number): Promise<() => Promise<void>> {
  const storage = s.server.storage;
  if (storage.kind === "sqlite") {
    storage.db.run(`CREATE TRIGGER chaos BEFORE INSERT ON events WHEN abs(random()) % ${oneIn} = 0
      BEGIN SELECT RAISE(ABORT, 'failed by the test'); END`);
    return async () => void storage.db.run("DROP TRIGGER chaos");
  }
  await storage.sql.unsafe(`CREATE FUNCTION chaos() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF random() < ${1 / oneIn} THEN RAISE EXCEPTION 'failed by the test'; END IF; RETURN NEW; END $$`);
  await storage.sql.unsafe("CREATE TRIGGER chaos BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION chaos()");
  return async () => void (await storage.sql.unsafe("DROP TRIGGER chaos ON events"));
}

test("every acknowledged publish and cancel holds; nothing refused was stored; nothing is left half done", async () => {
  const stopFailing = await failSomeCommits(60);
  const acked = new Map<string, string>();
  const refused: number[] = [];
  const cancelled = new Set<string>();
  const cancel = async (id: string) => {
    const res = await s.api(`/v2/messages/${id}`, { method: "DELETE" });
    // 404: it ended already (delivered, failed, or cancelled before).
    if (res.status === 200) cancelled.add(id);
    else expect([404, 503]).toContain(res.status);
  };
  const publish = async (i: number) => {
    const path = i % 4 === 1 ? `/chaos/slow/${i}` : i % 5 === 0 ? `/chaos/flaky/${i}` : `/chaos/ok/${i}`;
    const headers: Record<string, string> = { "Svc-Retries": "2", "Svc-Retry-Delay": "10" };
    if (i % 3 === 0) headers["Svc-Delay"] = "1s";
    const res = await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: String(i), headers });
    if (res.status === 503) return void refused.push(i);
    expect(res.status).toBe(200);
    const { messageId } = (await res.json()) as { messageId: string };
    acked.set(messageId, path);
    // Cancelled while its delivery is under way (or about to be).
    if (path.startsWith("/chaos/slow")) await cancel(messageId);
  };
  const cancelSome = () => Promise.all([...acked.keys()].filter((_, k) => k % 7 === 3).map(cancel));
  try {
    for (let round = 0; round < 6; round++) {
      await Promise.all([...Array.from({ length: 40 }, (_, k) => publish(round * 40 + k)), cancelSome()]);
    }
  } finally {
    await stopFailing();
  }
  // The failures happened, and transactions went through between them.
  expect(refused.length).toBeGreaterThan(0);
  expect(acked.size).toBeGreaterThan(0);

  for (const [id, path] of acked) {
    // Cancelled: it ends there. Else delivered, or failed after its retries (the flaky paths
    // answer 500 at times): never stuck on the way (delayed ones are due a second after their publish).
    const logs = await waitForState(s, id, cancelled.has(id) ? ["CANCELED"] : ["DELIVERED", "FAILED"]);
    if (logs.at(-1)!.state === "DELIVERED") expect(rx.received.some((r) => r.path === path)).toBe(true);
    expect(logs.filter((l) => l.state === "CREATED")).toHaveLength(1);
  }
  // A refused publish stored nothing: its body never reached the receiver.
  for (const i of refused) expect(rx.received.some((r) => r.text === String(i))).toBe(false);
  await expectIdleAndConsistent(s);
}, 120_000);
