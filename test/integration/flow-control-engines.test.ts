import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/core/log.ts";
import type { StorageEngine } from "../../src/engines/engine.ts";
import { openPostgresEngine } from "../../src/engines/postgres/engine.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import { FlowLanes, outstandingCap } from "../../src/flow-control/lanes.ts";
import { FlowKeySettings } from "../../src/flow-control/steering.ts";
import type { FlowControl, MessageRecord } from "../../src/model/message.ts";
import type { WriteTx } from "../../src/store/transactor.ts";
import { messageRecord } from "../helpers/message-record.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { ENGINES, type Engine } from "../helpers/server.ts";

/**
 * The dispatcher's flow-control gate (FlowLanes) on each storage engine, driven write by write as
 * the dispatcher and the outcome recorder drive it: a key's messages are handed out in publish
 * order, whatever a tick holds — also when one tick both ends a delivery of the key (releasing its
 * oldest held message) and claims a newer message of the key.
 */

const T0 = 1_800_000_000_000;
const FLOW: FlowControl = { key: "k", parallelism: 1, periodMs: 1000 };
let seq = 0;

function message(createdAt: number, flow = FLOW): MessageRecord {
  const id = `msg_flow_${String(++seq).padStart(6, "0")}`;
  const body = new TextEncoder().encode("body");
  return messageRecord({ id, accountId: "acct", createdAt, dispatchAt: createdAt, body, flow });
}

async function open(engine: Engine): Promise<{ storage: StorageEngine; close: () => Promise<void> }> {
  if (engine === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "svcd-flow-engine-"));
    const storage = openSqliteEngine({ path: join(dir, "svcd.sqlite"), busyTimeoutMs: 1000, log: silentLogger });
    return { storage, close: async () => (await storage.close(), rmSync(dir, { recursive: true, force: true })) };
  }
  const url = await freshDatabase();
  const options = { url, log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs: 2000, now: () => T0 };
  const storage = await openPostgresEngine(options);
  return { storage, close: async () => await storage.close() };
}

describe.each(ENGINES)("flow-control gate on %s", (engine) => {
  let storage: StorageEngine;
  let close: () => Promise<void>;
  let lanes: FlowLanes;
  let settings: FlowKeySettings;
  beforeAll(async () => {
    ({ storage, close } = await open(engine));
    settings = await FlowKeySettings.load(storage.stores.flowKeys);
    lanes = new FlowLanes(storage.stores.flow, settings, () => {});
  }, 60_000);
  afterAll(async () => await close());

  /** The dispatcher's claim write: what is due, through the gate; answers the ids handed out. */
  const claimWrite = (now: number) => async (tx: WriteTx) => {
    const out: string[] = [];
    for (const m of await storage.stores.messages.due(tx, now, 500)) {
      if (!(await lanes.admit(tx, m))) continue;
      await storage.stores.messages.claim(tx, m.id);
      out.push(m.id);
    }
    return out;
  };
  const insertAll = async (tx: WriteTx, messages: MessageRecord[]) => {
    for (const m of messages) await storage.stores.messages.insert(tx, m);
  };
  /** The outcome recorder's write for a delivered message: gone, and its key's next held one goes. */
  const deliveredWrite = (m: MessageRecord, now: number) => async (tx: WriteTx) => {
    await storage.stores.messages.delete(tx, m.id);
    await lanes.released(tx, m, now);
  };

  test("a delivery ends in the tick that claims a newer message of the key: the held ones still go first", async () => {
    const { commit } = storage;
    const cap = outstandingCap(FLOW);
    let now = T0 + 1000;
    // A backlog beyond the cap: the first `cap` go to the workers, the rest are held in order.
    const backlog = Array.from({ length: cap + 3 }, (_, i) => message(T0 + i));
    await commit.run((tx) => insertAll(tx, backlog));
    const handedOut = await commit.run(claimWrite(now));
    expect(handedOut).toEqual(backlog.slice(0, cap).map((m) => m.id));

    // Newer messages, published while those deliveries run, are due and not yet claimed.
    const newer = Array.from({ length: 3 }, (_, i) => message(now + i));
    await commit.run((tx) => insertAll(tx, newer));
    const all = [...backlog, ...newer];
    // Each round: one delivery ends and the dispatcher claims, both in the same tick.
    let delivered = 0;
    while (handedOut.length < all.length) {
      now += 10;
      const done = all[delivered++]!;
      const [, claimed] = await Promise.all([
        commit.run(deliveredWrite(done, now)),
        commit.run(claimWrite(now)),
      ]);
      handedOut.push(...claimed);
      // A tick that claims nothing lets the released messages come due for the next one.
      if (claimed.length === 0) handedOut.push(...(await commit.run(claimWrite(now))));
      expect(delivered).toBeLessThan(all.length);
    }
    expect(handedOut).toEqual(all.map((m) => m.id));
  });

  test("resumed in the tick that claims a newer message of the key: the ones held while paused go first", async () => {
    const { commit } = storage;
    const flow = { ...FLOW, key: "paused" };
    let now = T0 + 3_000_000;
    await commit.run((tx) => settings.change(tx, "acct", flow.key, { paused: true }));
    const held = Array.from({ length: 5 }, (_, i) => message(now + i, flow));
    await commit.run((tx) => insertAll(tx, held));
    now += 10;
    expect(await commit.run(claimWrite(now))).toEqual([]);
    const newer = message(now, flow);
    await commit.run((tx) => storage.stores.messages.insert(tx, newer));
    now += 10;
    const [, claimed] = await Promise.all([
      commit.run(async (tx) => {
        await settings.change(tx, "acct", flow.key, { paused: false });
        await lanes.refill(tx, "acct", flow.key, flow, now);
      }),
      commit.run(claimWrite(now)),
    ]);
    const handedOut = [...claimed, ...(await commit.run(claimWrite(now)))];
    expect(handedOut).toEqual([...held, newer].map((m) => m.id));
  });

  test("under the key's cap, a delivery ending in the tick that claims the next message lets it go at once", async () => {
    const { commit } = storage;
    const now = T0 + 5_000_000;
    const flow = { ...FLOW, key: "under-cap" };
    const [first, second] = [message(now, flow), message(now + 1, flow)];
    await commit.run((tx) => storage.stores.messages.insert(tx, first!));
    expect(await commit.run(claimWrite(now + 1))).toEqual([first!.id]);
    await commit.run((tx) => storage.stores.messages.insert(tx, second!));
    const [, claimed] = await Promise.all([
      commit.run(deliveredWrite(first!, now + 2)),
      commit.run(claimWrite(now + 2)),
    ]);
    expect(claimed).toEqual([second!.id]);
    await commit.run(deliveredWrite(second!, now + 3));
  });
});
