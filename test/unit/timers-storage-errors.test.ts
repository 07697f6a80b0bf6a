import { Database } from "bun:sqlite";
import { afterEach, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RealClock } from "../../src/core/clock.ts";
import { createLogger } from "../../src/core/log.ts";
import { MetricsEngine } from "../../src/metrics/engine.ts";
import { SqliteRollupStore } from "../../src/engines/sqlite/rollups.ts";
import { migrate, openDatabase } from "../../src/engines/sqlite/db.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Timers that write (the usage-metrics prune) meet a database locked by another process: the error
 * is logged and the timer runs again, instead of an exception thrown from a timer callback, which
 * ends the process.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("the usage-metrics prune survives a locked database and keeps running", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-prune-"));
  dirs.push(dir);
  const path = join(dir, "svcd.sqlite");
  const db = openDatabase(path, 20);
  migrate(db, MIGRATIONS);
  const store = new SqliteRollupStore(db);
  const prunes = spyOn(store, "prune");
  const lines: string[] = [];
  const engine = new MetricsEngine(store, new RealClock(), {
    pruneEveryMs: 40,
    log: createLogger({ level: "error", format: "json", write: (l) => lines.push(l) }),
  });
  const uncaught: unknown[] = [];
  const onError = (e: unknown) => uncaught.push(e);
  process.on("uncaughtException", onError);
  try {
    engine.start();
    const other = new Database(path);
    other.run("BEGIN IMMEDIATE");
    await waitUntil(() => lines.some((l) => l.includes("prune failed")), { timeoutMs: 5_000, what: "a failed prune" });
    other.run("COMMIT");
    other.close();
    // It was re-armed: it prunes again once the lock is gone.
    const failedAt = prunes.mock.calls.length;
    await waitUntil(() => prunes.mock.calls.length > failedAt + 1, { timeoutMs: 5_000, what: "prunes after the lock" });
    expect(uncaught).toEqual([]);
  } finally {
    process.off("uncaughtException", onError);
    engine.stop();
    db.close();
  }
});

test("usage counted while the database is locked is written once it is free, not lost", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-flush-"));
  dirs.push(dir);
  const path = join(dir, "svcd.sqlite");
  const db = openDatabase(path, 20);
  migrate(db, MIGRATIONS);
  const store = new SqliteRollupStore(db);
  const lines: string[] = [];
  const clock = new RealClock();
  const engine = new MetricsEngine(store, clock, {
    flushEveryMs: 30,
    log: createLogger({ level: "error", format: "json", write: (l) => lines.push(l) }),
  });
  try {
    engine.start();
    const other = new Database(path);
    other.run("BEGIN IMMEDIATE");
    const now = clock.now();
    engine.count("acct", "msg.delivered", 5, now);
    await waitUntil(() => lines.some((l) => l.includes("flush failed")), { timeoutMs: 5_000, what: "a failed flush" });
    engine.count("acct", "msg.delivered", 2, now);
    other.run("COMMIT");
    other.close();
    // The next timer flush writes both counts.
    const range = () => store.range("acct", "msg.delivered", 1, 0, Number.MAX_SAFE_INTEGER);
    await waitUntil(async () => (await range()).length > 0, {
      timeoutMs: 5_000,
      what: "the counts to be written",
    });
    const written = (await range()).reduce((sum, r) => sum + r.value, 0);
    expect(written).toBe(7);
  } finally {
    engine.stop();
    db.close();
  }
});
