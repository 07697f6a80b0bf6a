import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, openSync, readSync, closeSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/core/log.ts";
import { openDatabase, WAL_SIZE_LIMIT } from "../../src/engines/sqlite/db.ts";
import { BackgroundCheckpointer } from "../../src/engines/sqlite/wal.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Under a steady stream of commits (no idle moment for the WAL to be started over by itself), the
 * background checkpointer starts the WAL over once it passes its recycling size: the file keeps its
 * size and later commits write over it, instead of extending it to hundreds of MB and truncating it.
 * Once the writes stop, the file is emptied.
 */

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The WAL header's checkpoint sequence: SQLite adds one each time the WAL is started over. */
function walSequence(path: string): number {
  const fd = openSync(path, "r");
  try {
    const header = Buffer.alloc(16);
    return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : 0;
  } finally {
    closeSync(fd);
  }
}

function openWithCheckpointer(options: { recyclePages: number; idlePages: number }) {
  dir = mkdtempSync(join(tmpdir(), "svcd-wal-"));
  const path = join(dir, "db.sqlite");
  const db = openDatabase(path);
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB NOT NULL)");
  const all = { intervalMs: 2, truncatePages: 1_000_000, ...options };
  const checkpointer = new BackgroundCheckpointer(db, path, silentLogger, all);
  checkpointer.start();
  const insert = db.prepare<never, [Uint8Array]>("INSERT INTO t (b) VALUES (?)");
  // As the server's group commit: BEGIN IMMEDIATE, one commit per turn of the event loop.
  const commit = db.transaction(() => insert.run(new Uint8Array(3000).fill(7))).immediate;
  return { db, checkpointer, commit, wal: `${path}-wal` };
}

test("a WAL written without pause is started over and written over: it neither grows on nor is truncated", async () => {
  // The idle bound far away: only recycling can keep this WAL small.
  const { db, checkpointer, commit, wal } = openWithCheckpointer({ recyclePages: 64, idlePages: 1_000_000 });
  try {
    commit();
    const first = walSequence(wal);
    let shrank = false;
    // Commits one after the other, each ~4 KB, until the WAL has been started over three times
    // (a bound on the commits instead of a clock: without recycling it never is). Each commit
    // yields to the event loop, as the server does between its ticks: a RESTART needs the write
    // lock for a moment, which a writer that never lets go of it would not give (it then grows the
    // WAL to the hard bound, as before recycling).
    for (let commits = 0; commits < 100_000 && walSequence(wal) < first + 3; commits++) {
      await new Promise((resolve) => setImmediate(resolve));
      const before = statSync(wal).size;
      commit();
      const size = statSync(wal).size;
      // Only journal_size_limit may trim it, and only a file that passed the limit (a slow machine
      // can let the WAL run that far before a RESTART gets its moment).
      if (size < Math.min(before, WAL_SIZE_LIMIT)) shrank = true;
    }
    expect(walSequence(wal)).toBeGreaterThanOrEqual(first + 3);
    expect(shrank).toBe(false);
    expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM t").get()!.n).toBeGreaterThan(4);
  } finally {
    await checkpointer.stop();
    db.close();
  }
  // A clean stop still leaves an empty WAL.
  expect(statSync(wal).size).toBe(0);
});

test("once the writes stop, a WAL started over is emptied, though it holds fewer pages than its file", async () => {
  const { db, checkpointer, commit, wal } = openWithCheckpointer({ recyclePages: 64, idlePages: 32 });
  try {
    commit();
    const first = walSequence(wal);
    // Until a commit starts the WAL over while its file keeps more pages than the idle bound: the
    // WAL then holds that one commit only. (A main thread that pauses between two checkpoints looks
    // idle and has its WAL truncated instead; the commit after starts an empty file, so go on.)
    const frame = db.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size + 24;
    let recycled = false;
    for (let commits = 0; commits < 100_000 && !recycled; commits++) {
      await new Promise((resolve) => setImmediate(resolve));
      const before = walSequence(wal);
      commit();
      recycled = walSequence(wal) > before && statSync(wal).size > 32 * frame;
    }
    expect(recycled).toBe(true);
    expect(walSequence(wal)).toBeGreaterThan(first);
    await waitUntil(() => statSync(wal).size === 0, { what: "the idle WAL emptied" });
  } finally {
    await checkpointer.stop();
    db.close();
  }
});
