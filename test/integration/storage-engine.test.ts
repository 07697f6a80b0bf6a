import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/core/log.ts";
import type { StorageEngine } from "../../src/engines/engine.ts";
import { openPostgresEngine } from "../../src/engines/postgres/engine.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import type { WriteTx } from "../../src/store/transactor.ts";
import type { RunRecord, StepEntry } from "../../src/workflows/model.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { ENGINES, type Engine } from "../helpers/server.ts";

/**
 * The storage boundary's contract, one suite both engines pass: what a write reads is
 * there (no declaration needed), what it changes is visible to the later writes of its tick and stored by the commit, a
 * failing write leaves nothing while its neighbours commit, claims and queues behave alike.
 */

const T0 = 1_800_000_000_000;
let seq = 0;

function message(over: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id: `msg_engine_${++seq}`,
    accountId: "acct",
    kind: "message",
    state: "CREATED",
    dispatchAt: T0,
    notBefore: T0,
    createdAt: T0,
    retried: 0,
    maxRetries: 3,
    url: "http://127.0.0.1:1/x",
    method: "POST",
    headers: [["content-type", "text/plain"]],
    body: new TextEncoder().encode("body"),
    timeoutMs: 10_000,
    ...over,
  };
}

function workflowRun(runId: string): RunRecord {
  return { accountId: "acct", runId, url: "http://127.0.0.1:1/wf", createdAt: T0, state: "RUN_STARTED", config: { retries: 3, headers: [] } };
}

function workflowStep(runId: string, messageId: string): Omit<StepEntry, "position" | "state"> {
  return {
    accountId: "acct",
    runId,
    messageId,
    callType: "step",
    url: "http://127.0.0.1:1/wf",
    method: "POST",
    body: new TextEncoder().encode(messageId),
    createdAt: T0,
    headers: [],
    retries: 3,
  };
}

async function open(engine: Engine): Promise<{ storage: StorageEngine; close: () => Promise<void> }> {
  if (engine === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "svcd-engine-"));
    const storage = openSqliteEngine({ path: join(dir, "svcd.sqlite"), busyTimeoutMs: 1000, log: silentLogger });
    return { storage, close: async () => (await storage.close(), rmSync(dir, { recursive: true, force: true })) };
  }
  const storage = await openPostgresEngine({ url: await freshDatabase(), log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs: 2000, now: () => T0 });
  // Joined: this node owns every flow-control partition (it is alone).
  return { storage, close: async () => await storage.close() };
}

describe.each(ENGINES)("storage engine: %s", (engine) => {
  let storage: StorageEngine;
  let close: () => Promise<void>;
  beforeAll(async () => ({ storage, close } = await open(engine)), 60_000);
  afterAll(async () => await close());

  test("a stored message is claimed once, rescheduled, claimed again and deleted; the next due time follows", async () => {
    const { commit, stores } = storage;
    const m = message({ dispatchAt: T0 + 10 });
    await commit.run((tx) => stores.messages.insert(tx, m));
    expect(await commit.run((tx) => stores.messages.due(tx, T0, 10))).toEqual([]);
    const claimed = await commit.run(async (tx) => {
      const due = await stores.messages.due(tx, T0 + 10, 10);
      for (const d of due) await stores.messages.claim(tx, d.id);
      return due.map((d) => d.id);
    });
    expect(claimed).toEqual([m.id]);
    // Claimed: not due any more, and this process holds the attempt.
    expect(await commit.run((tx) => stores.messages.due(tx, T0 + 1000, 10))).toEqual([]);
    expect(await commit.run((tx) => stores.messages.stillClaimed(tx, [m.id]))).toEqual(new Set([m.id]));
    await commit.run((tx) => stores.messages.reschedule(tx, m.id, "RETRY", T0 + 500, 1));
    expect(await stores.messages.nextDueAt()).toBeLessThanOrEqual(T0 + 500);
    const again = await commit.run(async (tx) => {
      const due = await stores.messages.due(tx, T0 + 500, 10);
      for (const d of due) await stores.messages.claim(tx, d.id);
      return due.map((d) => [d.id, d.retried]);
    });
    expect(again).toEqual([[m.id, 1]]);
    expect(await commit.run((tx) => stores.messages.delete(tx, m.id))).toBe(true);
    expect(await stores.messages.read("acct", m.id)).toBeUndefined();
  });

  test("a message stored claimed is in flight and due nowhere; a write that stored it claimed and failed leaves nothing", async () => {
    const { commit, stores } = storage;
    const m = message({ accountId: "acct-claimed", dispatchAt: T0 });
    await commit.run((tx) => stores.messages.insertClaimed(tx, m));
    const due = await commit.run((tx) => stores.messages.due(tx, T0 + 1000, 500));
    expect(due.map((d) => d.id)).not.toContain(m.id);
    expect(await commit.run((tx) => stores.messages.stillClaimed(tx, [m.id]))).toEqual(new Set([m.id]));
    const stored = await stores.messages.read(m.accountId, m.id);
    expect(stored).toMatchObject({ state: "ACTIVE", dispatchAt: null, retried: 0 });
    expect(await stores.messages.accountCensus(m.accountId, T0 + 1000)).toEqual({ inFlight: 1, due: 0, delayed: 0, waiting: 0 });

    const lost = message({ accountId: "acct-claimed", dispatchAt: T0 });
    const failed = commit.run(async (tx) => {
      await stores.messages.insertClaimed(tx, lost);
      throw new Error("refused after the claim");
    });
    await expect(failed).rejects.toThrow("refused after the claim");
    expect(await stores.messages.read(lost.accountId, lost.id)).toBeUndefined();
    // Not this process's attempt either (SQLite's one process holds every row it finds ACTIVE).
    if (engine === "postgres") expect(await commit.run((tx) => stores.messages.stillClaimed(tx, [lost.id]))).toEqual(new Set());
    expect(await commit.run((tx) => stores.messages.delete(tx, m.id))).toBe(true);
  });

  test("messages due at the same instant are claimed in the order they were stored", async () => {
    const { commit, stores } = storage;
    const at = T0 + 3_000_000;
    const ms = Array.from({ length: 200 }, () => message({ dispatchAt: at }));
    await commit.run(async (tx) => {
      for (const m of ms) await stores.messages.insert(tx, m);
    });
    // Rescheduled in reverse: the order of storing, not of the last change, decides.
    await commit.run(async (tx) => {
      for (const m of [...ms].reverse()) await stores.messages.setDispatch(tx, m.id, "CREATED", at);
    });
    const claimed = await commit.run(async (tx) => {
      const due = (await stores.messages.due(tx, at, 500)).filter((d) => d.dispatchAt === at);
      for (const d of due) await stores.messages.claim(tx, d.id);
      return due.map((d) => d.id);
    });
    expect(claimed).toEqual(ms.map((m) => m.id));
  });

  test("a failing write of a tick leaves nothing; the other writes of the tick are stored", async () => {
    const { commit, stores } = storage;
    const kept = message({ dispatchAt: T0 + 1_000_000 });
    const lost = message({ dispatchAt: T0 + 1_000_000 });
    const [a, b] = await Promise.allSettled([
      commit.run((tx) => stores.messages.insert(tx, kept)),
      commit.run(async (tx) => {
        await stores.messages.insert(tx, lost);
        await stores.events.append(tx, { time: T0, accountId: "acct", messageId: lost.id, state: "CREATED", url: lost.url });
        throw new Error("refused half-way");
      }),
    ]);
    expect(a.status).toBe("fulfilled");
    expect(b.status).toBe("rejected");
    expect(await stores.messages.read("acct", kept.id)).toBeDefined();
    expect(await stores.messages.read("acct", lost.id)).toBeUndefined();
    expect(await stores.events.list("acct", { messageIds: [lost.id] }, null, 10)).toEqual([]);
  });

  test("what a write changed, the later writes of the same tick read", async () => {
    const { commit, stores } = storage;
    const m = message({ dispatchAt: T0 + 2_000_000 });
    const [, seen] = await Promise.all([
      commit.run((tx) => stores.messages.insert(tx, m)),
      commit.run(async (tx) => (await stores.messages.get(tx, "acct", m.id))?.id),
    ]);
    expect(seen).toBe(m.id);
  });

  test("a small table's row is seen outside writes once its tick committed, never before; inside the tick at once", async () => {
    const { commit, stores } = storage;
    const q = `visible-${engine}`;
    let ran = false;
    let committed = false;
    let seenInTick: unknown;
    const write = commit
      .run(async (tx) => {
        await stores.queues.upsert(tx, "acct", q, {}, { parallelism: 1, paused: false }, T0);
        ran = true;
      })
      .then(() => (committed = true));
    void commit.run(async (tx) => void (seenInTick = (await stores.queues.get(tx, "acct", q))?.name));
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const seen: boolean[] = [];
    while (!committed) {
      if (ran) seen.push((await stores.queues.get(null, "acct", q)) !== undefined);
      await nextTurn();
    }
    await write;
    // PostgreSQL commits over several turns: no read outside the tick meanwhile sees the row.
    if (engine === "postgres") expect(seen.length).toBeGreaterThan(0);
    expect(seen.some(Boolean)).toBe(false);
    expect(seenInTick).toBe(q);
    expect((await stores.queues.get(null, "acct", q))?.parallelism).toBe(1);
  });

  test("a deduplication key is taken once: the second publish is answered with the first message", async () => {
    const { commit, stores } = storage;
    const take = (id: string) => async (tx: WriteTx) => {
      const original = await stores.dedup.find(tx, "acct", "k1", T0, id);
      if (!original) await stores.dedup.remember(tx, "acct", "k1", id, T0 + 600_000);
      return original;
    };
    expect(await commit.run(take("first"))).toBeUndefined();
    expect(await commit.run(take("second"))).toBe("first");
  });

  test("a queue with parallelism 1 lets one message go; the next goes when it is gone", async () => {
    const { commit, stores } = storage;
    const q = `q${engine}`;
    await commit.run((tx) => stores.queues.upsert(tx, "acct", q, {}, { parallelism: 1, paused: false }, T0));
    const ms = [1, 2, 3].map(() => message({ queueName: q }));
    await commit.run(async (tx) => {
      for (const m of ms) {
        if (await stores.queues.mustWait(tx, "acct", q, 1, T0)) Object.assign(m, { state: "PARKED", dispatchAt: null });
        await stores.messages.insert(tx, m);
      }
      await stores.queues.promote(tx, "acct", q, 1, T0);
    });
    const dueIds = async () =>
      commit.run(async (tx) => {
        const due = await stores.messages.due(tx, T0, 100);
        for (const d of due) await stores.messages.claim(tx, d.id);
        return due.filter((d) => d.queueName === q).map((d) => d.id);
      });
    expect(await dueIds()).toEqual([ms[0]!.id]);
    expect(await dueIds()).toEqual([]);
    await commit.run(async (tx) => {
      await stores.messages.delete(tx, ms[0]!.id);
      await stores.queues.promote(tx, "acct", q, 1, T0);
    });
    expect(await dueIds()).toEqual([ms[1]!.id]);
    expect(await stores.queues.lag("acct", q)).toBe(2);
  });

  test("a DLQ entry is stored, read back whole, and deleted", async () => {
    const { commit, stores } = storage;
    const m = message();
    await commit.run((tx) =>
      stores.dlq.insert(tx, { dlqId: `dlq_${engine}_1`, failedAt: T0, message: m, responseStatus: 500, responseBody: new Uint8Array([1, 2]), error: "boom" }),
    );
    const entry = await stores.dlq.read("acct", `dlq_${engine}_1`);
    expect(entry?.message.id).toBe(m.id);
    expect([...entry!.message.body]).toEqual([...m.body]);
    expect(entry?.responseStatus).toBe(500);
    expect(await stores.dlq.count("acct")).toBe(1);
    expect(await commit.run((tx) => stores.dlq.delete(tx, "acct", `dlq_${engine}_1`))).toBe(true);
    expect(await stores.dlq.count("acct")).toBe(0);
  });

  test("a workflow run's list grows in order, also by two writes of one tick; its deliveries, errors and ending are kept", async () => {
    const { commit, stores } = storage;
    const runId = `wfr_${engine}_list`;
    await commit.run(async (tx) => {
      await stores.runs.insertRun(tx, workflowRun(runId));
      await stores.runs.appendStep(tx, workflowStep(runId, "m0"));
    });
    const positions = await Promise.all([
      commit.run((tx) => stores.runs.appendStep(tx, workflowStep(runId, "m1"))),
      commit.run((tx) => stores.runs.appendStep(tx, workflowStep(runId, "m2"))),
    ]);
    expect(positions).toEqual([1, 2]);
    await commit.run(async (tx) => {
      await stores.runs.setDelivery(tx, "acct", runId, "m1", "RETRY", T0 + 5);
      await stores.runs.addError(tx, "acct", runId, "m1", { error: "boom", body: "no", headers: { "x-a": ["1"] }, status: 500, time: T0 });
      await stores.runs.setDetails(tx, "acct", runId, "m2", { waitTimeoutDeadline: T0 + 9 });
    });
    const inWrite = await commit.run(async (tx) =>
      (await stores.runs.steps(tx, "acct", runId)).map((e) => [e.messageId, e.state, e.nextDeliveryAt ?? null]),
    );
    expect(inWrite).toEqual([["m0", "PENDING", null], ["m1", "RETRY", T0 + 5], ["m2", "PENDING", null]]);
    expect((await stores.runs.readSteps("acct", runId, 1)).map((e) => e.messageId)).toEqual(["m0", "m1"]);
    expect((await stores.runs.readStepOfMessage("acct", runId, "m2"))?.details).toEqual({ waitTimeoutDeadline: T0 + 9 });
    expect((await stores.runs.errors("acct", runId)).get("m1")).toEqual([{ error: "boom", body: "no", headers: { "x-a": ["1"] }, status: 500, time: T0 }]);
    await commit.run(async (tx) => {
      const run = (await stores.runs.getRun(tx, "acct", runId))!;
      await stores.runs.saveRun(tx, { ...run, state: "RUN_SUCCESS", completedAt: T0 + 10, unsettled: true });
    });
    expect(await stores.runs.readRun("acct", runId)).toMatchObject({ state: "RUN_SUCCESS", completedAt: T0 + 10, unsettled: true });
    expect((await stores.runs.unsettledRuns(10)).map((r) => r.runId)).toContain(runId);
  });

  test("a waiter is found by its event once, and an event kept for a run is taken once", async () => {
    const { commit, stores } = storage;
    const runId = `wfr_${engine}_waits`;
    const waiter = { accountId: "acct", runId, eventId: "evt", url: "http://127.0.0.1:1/wf", createdAt: T0, deadline: T0 + 60_000, headers: [], timeoutUrl: "http://127.0.0.1:1/wf", timeoutHeaders: {}, timeout: "1m", step: { stepId: 1 } };
    await commit.run(async (tx) => {
      await stores.runs.insertRun(tx, workflowRun(runId));
      await stores.waits.insert(tx, waiter);
      await stores.waits.keep(tx, "acct", runId, "early", new TextEncoder().encode("data"), T0);
    });
    expect((await stores.waits.readWaiting("acct", "evt")).map((w) => w.runId)).toEqual([runId]);
    const take = () =>
      commit.run(async (tx) => {
        let taken = 0;
        const waiting = await stores.waits.waiting(tx, "acct", "evt", runId);
        for (const w of waiting) if (await stores.waits.delete(tx, w.id)) taken++;
        return taken;
      });
    expect(await take()).toBe(1);
    expect(await take()).toBe(0);
    const kept = () => commit.run((tx) => stores.waits.takeKept(tx, "acct", runId, "early"));
    expect(new TextDecoder().decode(await kept())).toBe("data");
    expect(await kept()).toBeUndefined();
  });

  test("the log lists newest first with a cursor", async () => {
    const { commit, stores } = storage;
    await commit.run(async (tx) => {
      for (const state of ["CREATED", "ACTIVE", "DELIVERED"] as const)
        await stores.events.append(tx, { time: T0, accountId: "logs", messageId: "m-log", state, url: "http://x" });
    });
    const page = await stores.events.list("logs", {}, null, 2);
    expect(page.map((e) => e.state)).toEqual(["DELIVERED", "ACTIVE"]);
    const rest = await stores.events.list("logs", {}, page[1]!.seq, 2);
    expect(rest.map((e) => e.state)).toEqual(["CREATED"]);
  });
});

test("PostgreSQL: two nodes appending to one workflow run at once keep its list in order", async () => {
  const url = await freshDatabase();
  const open2 = () => openPostgresEngine({ url, log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs: 2000, now: () => T0 });
  const [a, b] = [await open2(), await open2()];
  const runId = "wfr_two_nodes";
  await a.commit.run((tx) => a.stores.runs.insertRun(tx, workflowRun(runId)));
  const append = (e: typeof a, i: number) => e.commit.run((tx) => e.stores.runs.appendStep(tx, workflowStep(runId, `m${i}`)));
  const positions = await Promise.all(Array.from({ length: 20 }, (_, i) => append(i % 2 ? a : b, i)));
  expect([...positions].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  expect((await a.stores.runs.readSteps("acct", runId)).map((e) => e.position)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  await Promise.all([a.close(), b.close()]);
}, 60_000);

test("PostgreSQL: two nodes firing the same schedule slot publish once", async () => {
  const url = await freshDatabase();
  const open2 = () => openPostgresEngine({ url, log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs: 2000, now: () => T0 });
  const a = await open2();
  const b = await open2();
  const row = {
    account_id: "acct", id: "sched", revision: 1, created_at: T0, cron: "* * * * *", destination_kind: "url" as const,
    destination: "http://x", headers: "[]", query: "", body: new Uint8Array(), caller_ip: null, settings: "{}",
    paused: 0, last_schedule_time: null, next_schedule_time: T0 + 60_000, last_states: "{}",
  };
  await a.commit.run((tx) => a.stores.schedules.upsert(tx, row));
  // As the scheduler's write does: take the slot, then move the next run time past it.
  const fire = (e: typeof a) =>
    e.commit.run(async (tx) => {
      const took = await e.stores.schedules.takeTrigger(tx, "acct", "sched", 1, T0 + 60_000);
      if (took) await e.stores.schedules.setNext(tx, "acct", "sched", 1, T0 + 120_000);
      return took;
    });
  const fired = await Promise.all([fire(a), fire(b)]);
  expect(fired.filter(Boolean)).toHaveLength(1);
  await Promise.all([a.close(), b.close()]);
}, 60_000);

test("PostgreSQL: a message retried and claimed again in one tick is this node's attempt after the commit", async () => {
  const url = await freshDatabase();
  const e = await openPostgresEngine({ url, log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs: 2000, now: () => T0 });
  const m = message();
  await e.commit.run((tx) => e.stores.messages.insert(tx, m));
  expect(await e.commit.run(async (tx) => (await e.stores.messages.due(tx, T0, 10)).map((d) => d.id))).toEqual([m.id]);
  // The attempt failed and is retried at once; the next claim pass takes it again, in the same tick.
  const retried = e.commit.run((tx) => e.stores.messages.reschedule(tx, m.id, "RETRY", T0, 1));
  const claimedAgain = e.commit.run(async (tx) => (await e.stores.messages.due(tx, T0, 10)).map((d) => d.id));
  await retried;
  expect(await claimedAgain).toEqual([m.id]);
  // The second attempt's outcome must be recorded: the first one's end does not take it away.
  expect(await e.commit.run((tx) => e.stores.messages.stillClaimed(tx, [m.id]))).toEqual(new Set([m.id]));
  await e.close();
}, 60_000);

test("PostgreSQL: an outcome batch's claims check locks its rows until its tick ends; a claim lost before is not this node's", async () => {
  const url = await freshDatabase();
  const e = await openPostgresEngine({ url, log: silentLogger, poolSize: 4, ticksInFlight: 3, heartbeatMs: 200, nodeTimeoutMs: 2000, now: () => T0 });
  const other = new SQL(url, { max: 1 });
  const [kept, lost] = [message(), message()];
  await e.commit.run(async (tx) => {
    for (const m of [kept, lost]) await e.stores.messages.insert(tx, m);
  });
  const claimed = await e.commit.run(async (tx) => (await e.stores.messages.due(tx, T0, 10)).map((d) => d.id).sort());
  expect(claimed).toEqual([kept.id, lost.id].sort());
  // Handed back while its attempt ran (as the leader does with a node presumed dead).
  await other`UPDATE messages SET state = 'RETRY', claimed_by = NULL WHERE id = ${lost.id}`;
  const locked = async () => {
    try {
      await other.begin(async (tx) => await tx`SELECT id FROM messages WHERE id = ${kept.id} FOR UPDATE NOWAIT`);
      return false;
    } catch (error) {
      if ((error as { errno?: string }).errno !== "55P03") throw error;
      return true;
    }
  };
  const held = await e.commit.run(async (tx) => {
    const held = await e.stores.messages.stillClaimed(tx, [kept.id, lost.id]);
    // The row this node holds is locked once the check answered: no hand-back races the outcome.
    expect(await locked()).toBe(true);
    return held;
  });
  expect(held).toEqual(new Set([kept.id]));
  // Released with its tick.
  expect(await locked()).toBe(false);
  await other.close();
  await e.close();
}, 60_000);
