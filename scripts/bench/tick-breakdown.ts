/**
 * Where a stored publish's SQLite time goes, A/B in one process: the publish tick of
 * sqlite-tick.ts (each write inserts a delayed message with a 1 KB body and its CREATED entry)
 * on databases that each lack one part, rounds alternating. The difference to `base` is what that
 * part costs per message (CPU µs, the commit included).
 *
 *   bun scripts/bench/tick-breakdown.ts [variant ...] [--rounds 4]   (every variant when none is named)
 *
 * `no-entry`: no CREATED entry; `no-entry-indexes`: the event log without its indexes (account,
 * message id), or without one of them (`no-entry-account-index`, `no-entry-message-index`); `no-message-indexes`: the messages without `messages_due` and `messages_account`;
 * `no-key-index`: the messages' id a plain column (no index behind the text key).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Database } from "bun:sqlite";
import { newMessageId } from "../../src/core/ids.ts";
import { silentLogger } from "../../src/core/log.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import type { EventRecord } from "../../src/logs/model.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import type { WriteTx } from "../../src/store/transactor.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: "string", default: "4" } } });
const VARIANTS = ["base", "no-entry", "no-entry-indexes", "no-entry-account-index", "no-entry-message-index", "no-message-indexes", "no-key-index"];
const variants = positionals.length > 0 ? positionals : VARIANTS;
for (const v of variants) if (!VARIANTS.includes(v)) throw new Error(`unknown variant ${v} (one of ${VARIANTS.join(", ")})`);
const body = new TextEncoder().encode(JSON.stringify({ x: "a".repeat(1000) }));
const PER_TICK = 48;
const TICKS = 600;

/** The messages table again, its id a plain column (the other indexes and triggers as they were). */
function dropKeyIndex(db: Database): void {
  const table = db.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE name = 'messages'").get()!;
  const others = db
    .query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE tbl_name = 'messages' AND type IN ('index', 'trigger') AND sql IS NOT NULL")
    .all();
  db.run("ALTER TABLE messages RENAME TO messages_before");
  db.run(table.sql.replace("id TEXT PRIMARY KEY", "id TEXT"));
  db.run("DROP TABLE messages_before");
  for (const other of others) db.run(other.sql);
}

function side(variant: string) {
  const dir = mkdtempSync(join(tmpdir(), "svcd-tick-breakdown-"));
  const engine = openSqliteEngine({ path: join(dir, "svcd.sqlite"), busyTimeoutMs: 10_000, log: silentLogger });
  for (const s of engine.services) s.start?.();
  if (variant === "no-key-index") dropKeyIndex(engine.db);
  if (variant === "no-message-indexes") for (const i of ["messages_due", "messages_account"]) engine.db.run(`DROP INDEX ${i}`);
  if (variant === "no-entry-indexes") for (const i of ["events_account", "events_message"]) engine.db.run(`DROP INDEX ${i}`);
  if (variant === "no-entry-account-index") engine.db.run("DROP INDEX events_account");
  if (variant === "no-entry-message-index") engine.db.run("DROP INDEX events_message");
  const { messages, events } = engine.stores;
  const publish = async (tx: WriteTx) => {
    const now = Date.now();
    const m: MessageRecord = {
      id: newMessageId(), accountId: "acc_1", kind: "message", state: "CREATED", dispatchAt: now + 3600e3,
      notBefore: now + 3600e3, createdAt: now, retried: 0, maxRetries: 3, url: "http://127.0.0.1:1234/p",
      method: "POST", headers: [["content-type", "application/json"]], body, timeoutMs: 30_000,
    };
    await messages.insert(tx, m);
    if (variant === "no-entry") return;
    const entry: EventRecord = {
      accountId: m.accountId, time: now, messageId: m.id, state: "CREATED", url: m.url, method: "POST",
      maxRetries: 3, body: m.body, header: m.headers,
    };
    await events.append(tx, entry);
  };
  const round = async (): Promise<number> => {
    const t0 = process.cpuUsage();
    for (let t = 0; t < TICKS; t++) {
      const writes = Array.from({ length: PER_TICK }, () => engine.commit.run(publish));
      void engine.commit.flush();
      await Promise.all(writes);
    }
    const used = process.cpuUsage(t0);
    return (used.user + used.system) / (TICKS * PER_TICK);
  };
  const close = async () => {
    for (const s of engine.services) await s.stop(Date.now() + 5_000);
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { variant, round, close, results: [] as number[] };
}

const sides = variants.map(side);
for (const s of sides) await s.round(); // warm-up
for (let r = 0; r < Number(values.rounds); r++) for (const s of sides) s.results.push(await s.round());
const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
const base = sides.find((s) => s.variant === "base");
for (const s of sides) {
  const m = median(s.results);
  const delta = base && s !== base ? `  (${(median(base.results) - m).toFixed(1)} µs for what it lacks)` : "";
  console.log(`${s.variant.padEnd(20)} ${m.toFixed(1)} µs per message${delta}`);
  await s.close();
}
