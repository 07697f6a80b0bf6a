/**
 * Fills a fresh svcd database with delayed messages before the server starts, through the same
 * lifecycle code a publish uses (message row + its CREATED log entry), in large transactions:
 * a million HTTP publishes would not fit the time budget. Durability is not needed while
 * filling (synchronous=OFF); the server opens the finished file as usual.
 */
import { statSync } from "node:fs";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { newMessageId } from "../../src/core/ids.ts";
import { DlqStore } from "../../src/dlq/store.ts";
import { EventStore } from "../../src/logs/store.ts";
import { MessageLifecycle } from "../../src/messages/lifecycle.ts";
import type { MessageRecord } from "../../src/messages/model.ts";
import { MessageStore } from "../../src/messages/store.ts";
import { migrate, openDatabase } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/schema.ts";
import { BODY } from "./payload.ts";

const DAY_MS = 24 * 3600 * 1000;

export interface FillResult {
  messages: number;
  seconds: number;
  /** Database file size after a full checkpoint, divided by the messages. */
  bytesPerMessage: number;
  /** Split by table (with its indexes) when SQLite's dbstat table is available. */
  tables?: Array<{ name: string; bytes: number }>;
}

export function fillBacklog(dbPath: string, messages: number, destination: string): FillResult {
  const t0 = performance.now();
  const db = openDatabase(dbPath);
  migrate(db, MIGRATIONS);
  db.run("PRAGMA synchronous = OFF");
  db.run("PRAGMA wal_autocheckpoint = 0");
  const lifecycle = new MessageLifecycle(new MessageStore(db), new EventStore(db), new DlqStore(db), { count() {} });
  const now = Date.now();
  const headers: Array<[string, string]> = [["Content-Type", "application/json"]];
  const insertChunk = db.transaction((count: number) => {
    for (let i = 0; i < count; i++) {
      const dueAt = now + DAY_MS + i;
      const m: MessageRecord = {
        id: newMessageId(),
        accountId: DEFAULT_ACCOUNT.userId,
        kind: "message",
        state: "CREATED",
        dispatchAt: dueAt,
        notBefore: dueAt,
        createdAt: now,
        retried: 0,
        maxRetries: 3,
        url: destination,
        method: "POST",
        headers,
        body: BODY,
        timeoutMs: 2 * 3600 * 1000,
      };
      lifecycle.accept(m, now);
    }
  });
  const CHUNK = 20_000;
  for (let done = 0; done < messages; done += CHUNK) insertChunk(Math.min(CHUNK, messages - done));
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  let tables: FillResult["tables"];
  try {
    const rows = db
      .query<{ name: string; tbl: string; bytes: number }, []>(
        "SELECT s.name AS name, COALESCE(m.tbl_name, s.name) AS tbl, SUM(s.pgsize) AS bytes FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY s.name",
      )
      .all();
    const byTable = new Map<string, number>();
    for (const r of rows) byTable.set(r.tbl, (byTable.get(r.tbl) ?? 0) + r.bytes);
    tables = [...byTable.entries()].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes).slice(0, 4);
  } catch {
    tables = undefined; // dbstat not compiled in
  }
  db.close();
  const size = statSync(dbPath).size;
  return { messages, seconds: (performance.now() - t0) / 1000, bytesPerMessage: size / messages, tables };
}
