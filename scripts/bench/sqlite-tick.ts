/**
 * Micro-benchmark of the SQLite statements of a tick, through the real stores and GroupCommit, in
 * isolation from HTTP: CPU µs per message. `publish`: each write inserts a message (1 KB body) and
 * its CREATED entry. `e2e`: as publish, then the message is claimed (ACTIVE) and ends (DELIVERED),
 * each in a write of a later tick, as the dispatcher and the recorder do. `empty`: 48 writes that
 * do nothing (the group commit's own cost). `claimed`: as e2e for a message claimed at publish: each
 * write stores it claimed with its CREATED and ACTIVE entries (`insertClaimed`), and it ends in a
 * write of the next tick. The stores are driven through the asynchronous contract (each write gets
 * its transaction): checkouts from before it do not load here.
 *
 * Each `--src` (default: this checkout's) is loaded in the same process with a database of its
 * own, and their rounds alternate, so that the machine's load falls on all alike (A/B: pass
 * `--src /path/to/main/src --src src`). `--no-checkpointer` (for a profiler, whose signals cut the
 * checkpointer's lock waits short) turns checkpoints off altogether.
 *
 *   bun scripts/bench/sqlite-tick.ts [publish|e2e|claimed|empty] [--src <checkout>/src]... [--rounds 8]
 *       [--no-checkpointer]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    src: { type: "string", multiple: true },
    rounds: { type: "string", default: "8" },
    "no-checkpointer": { type: "boolean", default: false },
  },
});
const mode = positionals[0] ?? "publish";
const sources = (values.src ?? [join(import.meta.dir, "../../src")]).map((s) => resolve(s));
const log: any = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const body = new TextEncoder().encode(JSON.stringify({ x: "a".repeat(1000) }));
const url = "http://127.0.0.1:1234/p";
const PER_TICK = 48;
const TICKS = mode === "e2e" || mode === "claimed" ? 300 : 800;

async function side(src: string) {
  const { openSqliteEngine } = await import(join(src, "engines/sqlite/engine.ts"));
  const { newMessageId } = await import(join(src, "core/ids.ts"));
  const dir = mkdtempSync(join(tmpdir(), "sqlite-tick-"));
  const eng = openSqliteEngine({ path: `${dir}/x.db`, busyTimeoutMs: 10_000, log });
  if (values["no-checkpointer"]) eng.db.run("PRAGMA wal_autocheckpoint = 0");
  else for (const s of eng.services) s.start?.();
  const { messages, events } = eng.stores;
  const msg = (now: number, due: boolean): any => {
    const at = due ? now : now + 3600e3;
    return {
      id: newMessageId(), accountId: "acc_1", kind: "message", state: "CREATED", dispatchAt: at, notBefore: at,
      createdAt: now, retried: 0, maxRetries: 3, url, method: "POST",
      headers: [["content-type", "application/json"]], body, timeoutMs: 30000,
    };
  };
  const entry = (m: any, state: string, extra: object = {}): any =>
    ({ accountId: m.accountId, time: Date.now(), messageId: m.id, state, url: m.url, method: "POST", maxRetries: 3, ...extra });
  const tick = async (writes: Array<(tx: any) => Promise<void>>) => {
    const ps = writes.map((w) => eng.commit.run(w));
    eng.commit.flush();
    await Promise.all(ps);
  };
  const round = async (): Promise<number> => {
    const t0 = process.cpuUsage();
    for (let t = 0; t < TICKS; t++) {
      if (mode === "empty") {
        await tick(Array.from({ length: PER_TICK }, () => async () => {}));
        continue;
      }
      if (mode === "claimed") {
        const stored: any[] = [];
        await tick(Array.from({ length: PER_TICK }, () => async (tx) => {
          const m = msg(Date.now(), true);
          await messages.insertClaimed(tx, m);
          await events.append(tx, entry(m, "CREATED", { body: m.body, header: [["content-type", "application/json"]] }));
          await events.append(tx, entry(m, "ACTIVE"));
          stored.push(m);
        }));
        await tick(stored.map((m) => async (tx) => {
          await messages.delete(tx, m.id);
          await events.append(tx, entry(m, "DELIVERED", { responseStatus: 200, responseBody: new Uint8Array(2) }));
        }));
        continue;
      }
      const due = mode === "e2e";
      await tick(Array.from({ length: PER_TICK }, () => async (tx) => {
        const m = msg(Date.now(), due);
        await messages.insert(tx, m);
        await events.append(tx, entry(m, "CREATED", { body: m.body, header: [["content-type", "application/json"]] }));
      }));
      if (!due) continue;
      let claimed: any[] = [];
      await tick([async (tx) => {
        claimed = await messages.due(tx, Date.now(), PER_TICK);
        for (const m of claimed) {
          await messages.claim(tx, m.id);
          await events.append(tx, entry(m, "ACTIVE"));
        }
      }]);
      await tick(claimed.map((m) => async (tx) => {
        await messages.delete(tx, m.id);
        await events.append(tx, entry(m, "DELIVERED", { responseStatus: 200, responseBody: new Uint8Array(2) }));
      }));
    }
    const d = process.cpuUsage(t0);
    return (d.user + d.system) / (TICKS * PER_TICK);
  };
  const close = async () => {
    for (const s of eng.services) await s.stop?.();
    eng.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { src, round, close, results: [] as number[] };
}

const sides = [];
for (const src of sources) sides.push(await side(src));
for (const s of sides) await s.round(); // warm-up
for (let r = 0; r < Number(values.rounds); r++) for (const s of sides) s.results.push(await s.round());
for (const s of sides) {
  const sorted = [...s.results].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(`${mode} ${s.src}: µs/message median ${median.toFixed(1)} min ${sorted[0]!.toFixed(1)}`);
  await s.close();
}
