import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/config.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { DIALECTS } from "../../src/core/dialect.ts";
import { silentLogger, type Logger } from "../../src/core/log.ts";
import type { DispatchGate } from "../../src/delivery/gate.ts";
import { InFlightAttempts } from "../../src/delivery/in-flight.ts";
import { OutcomeRecorder } from "../../src/delivery/outcome-recorder.ts";
import { DeadLetters } from "../../src/dlq/dead-letters.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import { eventLogListener } from "../../src/logs/event-log.ts";
import { MessageLifecycle } from "../../src/messages/lifecycle.ts";
import { MessageEvents, onFinished, type MessageListener } from "../../src/model/events.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import type { DeliveryOutcome } from "../../src/model/outcome.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * The outcome recorder against a real SQLite engine and the real lifecycle: what lands in the
 * database for each outcome, batching, the savepoint fallback after a bug, storage errors.
 */
const NOW = 1_700_000_000_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(opts: { listeners?: MessageListener[]; file?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "svcd-recorder-"));
  dirs.push(dir);
  const path = opts.file ? join(dir, "svcd.sqlite") : null;
  const errors: string[] = [];
  const log: Logger = { ...silentLogger, error: (msg) => errors.push(msg) };
  const engine = openSqliteEngine({ path, busyTimeoutMs: 20, log });
  const { commit, stores } = engine;
  const clock = new ManualClock(NOW);
  const events = new MessageEvents(log, [eventLogListener(stores.events), ...(opts.listeners ?? [])]);
  const admit = async () => {};
  const deadLetters = new DeadLetters(stores.dlq);
  const lifecycle = new MessageLifecycle({ store: stores.messages, events, admit, deadLetters });
  const inFlight = new InFlightAttempts();
  const released: string[] = [];
  const gate: DispatchGate = {
    admit: async () => true,
    released: async (_tx, m) => void released.push(m.id),
    recover: async () => 0,
  };
  let wakes = 0;
  const recorder = new OutcomeRecorder({
    claims: stores.messages,
    config: { retryDelayScale: 1 },
    clock,
    dialect: DIALECTS.svc,
    log,
    commit,
    inFlight,
    lifecycle,
    gate,
    wake: () => void wakes++,
  });
  /** Stores a message as claimed (ACTIVE) and opens its attempt, as the dispatcher does. */
  const claimed = async (id: string, over: Partial<MessageRecord> = {}) => {
    const m: MessageRecord = {
      id,
      accountId: defaultConfig("/tmp").defaultAccount.userId,
      kind: "message",
      state: "CREATED",
      dispatchAt: NOW,
      notBefore: NOW,
      createdAt: NOW,
      retried: 0,
      maxRetries: 2,
      url: `http://example.com/${id}`,
      method: "POST",
      headers: [],
      body: new Uint8Array(),
      timeoutMs: 1000,
      ...over,
    };
    await commit.run(async (tx) => {
      await lifecycle.accept(tx, m, NOW);
      await stores.messages.claim(tx, m.id);
    });
    return inFlight.open(m);
  };
  const outcome = (ticket: number, id: string, status?: number): DeliveryOutcome =>
    status === undefined
      ? { ticket, messageId: id, error: "connection refused", startedAt: NOW, durationMs: 1 }
      : { ticket, messageId: id, status, startedAt: NOW, durationMs: 1 };
  const row = (id: string) => stores.messages.read(defaultConfig("/tmp").defaultAccount.userId, id);
  return { engine, path, recorder, inFlight, released, errors, claimed, outcome, row, stores, wakes: () => wakes };
}

test("delivered, retried and failed outcomes are recorded together, each with its consequences", async () => {
  const t = setup();
  const ok = await t.claimed("ok");
  const again = await t.claimed("again");
  const dead = await t.claimed("dead", { retried: 2 });
  t.recorder.add(t.outcome(ok.ticket, "ok", 200));
  t.recorder.add(t.outcome(again.ticket, "again", 503));
  t.recorder.add(t.outcome(dead.ticket, "dead"));
  expect(t.recorder.pending).toBe(3);
  await t.recorder.stop();

  expect(await t.row("ok")).toBeUndefined();
  expect(await t.row("again")).toMatchObject({ state: "RETRY", retried: 1 });
  expect((await t.row("again"))!.dispatchAt!).toBeGreaterThan(NOW);
  expect(await t.row("dead")).toBeUndefined();
  const dlq = t.engine.db.query<{ message_id: string; error: string }, []>("SELECT message_id, error FROM dlq").all();
  expect(dlq).toEqual([{ message_id: "dead", error: "connection refused" }]);
  expect(t.inFlight.size).toBe(0);
  expect(t.released.sort()).toEqual(["again", "dead", "ok"]);
  expect(t.recorder.pending).toBe(0);
  expect(t.wakes()).toBeGreaterThan(0);
});

test("outcomes arriving within a few ms share one batch: one write, one wake-up", async () => {
  const t = setup();
  const a = await t.claimed("a");
  const b = await t.claimed("b");
  t.recorder.add(t.outcome(a.ticket, "a", 200));
  t.recorder.add(t.outcome(b.ticket, "b", 200));
  // Nothing is written before the batch window ends.
  expect(await t.row("a")).toBeDefined();
  await waitUntil(() => t.wakes() > 0, { what: "the batch to be recorded" });
  expect(await t.row("a")).toBeUndefined();
  expect(await t.row("b")).toBeUndefined();
  expect(t.wakes()).toBe(1);
});

test("an outcome whose attempt was disowned (a cancel) is ignored", async () => {
  const t = setup();
  const a = await t.claimed("a");
  t.inFlight.disown("a");
  t.recorder.add(t.outcome(a.ticket, "a", 200));
  await t.recorder.stop();
  expect(await t.row("a")).toMatchObject({ state: "ACTIVE" });
  expect(t.released).toEqual([]);
});

test("a bug while recording one outcome: the others land, the faulty one stays ACTIVE and leaves the in-flight table", async () => {
  const poison = onFinished((_tx, m) => {
    if (m.id === "poison") throw new Error("boom");
  });
  const t = setup({ listeners: [poison] });
  const attempts = await Promise.all(["a", "poison", "b"].map((id) => t.claimed(id)));
  for (const [i, id] of ["a", "poison", "b"].entries()) t.recorder.add(t.outcome(attempts[i]!.ticket, id, 200));
  await t.recorder.stop();
  expect(await t.row("a")).toBeUndefined();
  expect(await t.row("b")).toBeUndefined();
  expect(await t.row("poison")).toMatchObject({ state: "ACTIVE" });
  expect(t.inFlight.has("poison")).toBe(false);
  expect(t.released.sort()).toEqual(["a", "b"]);
  expect(t.errors).toEqual(["recording a delivery outcome failed"]);
  // Nothing of the faulty one's rolled-back attempt reached the log.
  const logged = t.engine.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM events WHERE message_id = 'poison' AND state = 'DELIVERED'").get()!;
  expect(logged.n).toBe(0);
});

test("storage unavailable: nothing is recorded, the attempts stay in flight, and they are recorded once it answers", async () => {
  const t = setup({ file: true });
  const a = await t.claimed("a");
  const other = new Database(t.path!);
  other.run("BEGIN IMMEDIATE");
  t.recorder.add(t.outcome(a.ticket, "a", 200));
  await waitUntil(() => t.errors.length > 0, { what: "the failed write" });
  expect(t.errors[0]).toStartWith("recording delivery outcomes failed");
  expect(t.inFlight.has("a")).toBe(true);
  expect(t.recorder.pending).toBe(1);
  other.run("COMMIT");
  other.close();
  await waitUntil(async () => !(await t.row("a")), { what: "the outcome to be recorded after the lock" });
  expect(t.inFlight.size).toBe(0);
  await t.recorder.stop();
  t.engine.close();
});
