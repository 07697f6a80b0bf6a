/**
 * Micro-benchmark of the SQLite statements of a tick, through the real stores and GroupCommit, in
 * isolation from HTTP: CPU µs per message. `publish`: each write inserts a message (1 KB body) and
 * its CREATED entry. `e2e`: as publish, then the message is claimed (ACTIVE) and ends (DELIVERED),
 * each in a write of a later tick, as the dispatcher and the recorder do.
 *
 * `empty`: 48 writes that do nothing (the group commit's own cost). Alternate checkouts with --src.
 *
 *   bun scripts/bench/sqlite-tick.ts [publish|e2e|empty] [--src <checkout>/src] [--no-checkpointer]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const mode = process.argv[2] ?? "publish";
const srcArg = process.argv.indexOf("--src");
const src = srcArg > 0 ? resolve(process.argv[srcArg + 1]!) : resolve(import.meta.dir, "../../src");
const { openSqliteEngine } = await import(join(src, "engines/sqlite/engine.ts"));
const { newMessageId } = await import(join(src, "core/ids.ts"));

const dir = mkdtempSync(join(tmpdir(), "sqlite-tick-"));
const log: any = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const eng = openSqliteEngine({ path: `${dir}/x.db`, busyTimeoutMs: 10_000, log });
// --no-checkpointer (for a profiler, whose signals cut the checkpointer's lock waits short): no checkpoint at all.
if (!process.argv.includes("--no-checkpointer")) for (const s of eng.services) s.start?.();
else eng.db.run("PRAGMA wal_autocheckpoint = 0");
const { messages, events } = eng.stores;
const body = new TextEncoder().encode(JSON.stringify({ x: "a".repeat(1000) }));
const url = "http://127.0.0.1:1234/p";

function msg(now: number, due: boolean): any {
  const at = due ? now : now + 3600e3;
  return {
    id: newMessageId(), accountId: "acc_1", kind: "message", state: "CREATED", dispatchAt: at, notBefore: at,
    createdAt: now, retried: 0, maxRetries: 3, url, method: "POST",
    headers: [["content-type", "application/json"]], body, timeoutMs: 30000,
  };
}
function entry(m: any, now: number, state: string, extra: object = {}): any {
  return { accountId: m.accountId, time: now, messageId: m.id, state, url: m.url, method: "POST", maxRetries: 3, ...extra };
}

const PER_TICK = 48;
const TICKS = mode === "e2e" ? 600 : 1500;
const tick = async (writes: Array<() => void>) => {
  const ps = writes.map((w) => eng.commit.run(w));
  eng.commit.flush();
  await Promise.all(ps);
};

async function round(): Promise<number> {
  const t0 = process.cpuUsage();
  for (let t = 0; t < TICKS; t++) {
    const due = mode === "e2e";
    if (mode === "empty") {
      await tick(Array.from({ length: PER_TICK }, () => () => {}));
      continue;
    }
    const published: any[] = [];
    await tick(Array.from({ length: PER_TICK }, () => () => {
      const now = Date.now();
      const m = msg(now, due);
      messages.insert(m);
      events.append(entry(m, now, "CREATED", { body: m.body, header: { "content-type": ["application/json"] } }));
      published.push(m);
    }));
    if (!due) continue;
    let claimed: any[] = [];
    await tick([() => {
      claimed = messages.due(Date.now(), PER_TICK);
      for (const m of claimed) {
        messages.claim(m.id);
        events.append(entry(m, Date.now(), "ACTIVE"));
      }
    }]);
    await tick(claimed.map((m) => () => {
      messages.delete(m.id);
      events.append(entry(m, Date.now(), "DELIVERED", { responseStatus: 200, responseBody: new Uint8Array(2) }));
    }));
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / (TICKS * PER_TICK);
}

await round();
const r: number[] = [];
for (let i = 0; i < 5; i++) r.push(await round());
const sorted = [...r].sort((a, b) => a - b);
console.log(mode, src, "min", sorted[0]!.toFixed(1), "median", sorted[2]!.toFixed(1), "|", r.map((x) => x.toFixed(1)).join(" "));
for (const s of eng.services) await s.stop?.();
eng.close();
rmSync(dir, { recursive: true, force: true });
