import { statSync } from "node:fs";
import type { Logger } from "../../core/log.ts";
import { SINGLE_NODE, type SqliteStorage, type Stores } from "../engine.ts";
import { MIGRATIONS } from "../migrations.ts";
import { SqliteAccountStore, SqliteRequestCounts } from "./account-store.ts";
import { SqliteFaultRuleStore } from "./faults.ts";
import { SharedBodies } from "./bodies.ts";
import { SqliteDedupStore } from "./dedup.ts";
import { SqliteDlqStore } from "./dlq.ts";
import { SqliteEventStore } from "./events.ts";
import { SqliteFlowKeyStore, SqliteFlowStore } from "./flow-stores.ts";
import { GroupCommit } from "./group-commit.ts";
import { createSearchStore, createVectorStore, SqliteUsageLedger } from "./index-stores.ts";
import { SqliteMessageStore } from "./messages.ts";
import { openStore } from "./open.ts";
import { SqliteQueueStore } from "./queue-store.ts";
import { SqliteRollupStore } from "./rollups.ts";
import { SqliteScheduleStore } from "./schedules.ts";
import { SqliteUrlGroupStore } from "./url-group-store.ts";
import { BackgroundCheckpointer } from "./wal.ts";
import { SqliteRunStore } from "./workflow-runs.ts";
import { SqliteWaitStore } from "./workflow-waits.ts";

/**
 * The embedded engine: one SQLite file in WAL mode (or memory), every domain's migrations applied
 * at open (a file that cannot be used fails the start with one line), statements prepared once
 * per store, synchronous writes inside one group commit per tick. A file database checkpoints its
 * WAL on a thread of its own.
 */
export function openSqliteEngine(opts: {
  path: string | null;
  busyTimeoutMs: number;
  log: Logger;
  /** Every write runs twice, the first time undone (GroupCommit's drill). */
  rehearseWrites?: boolean;
}): SqliteStorage {
  const db = openStore(opts.path, opts.busyTimeoutMs, MIGRATIONS);
  const bodies = new SharedBodies(db);
  const events = new SqliteEventStore(db, bodies, (): boolean => commit.inWrite);
  const commit = new GroupCommit(db, [events], opts.rehearseWrites);
  const probe = db.prepare("SELECT 1");
  const pageCount = db.prepare<{ page_count: number }, []>("PRAGMA page_count");
  const pageSize = db.prepare<{ page_size: number }, []>("PRAGMA page_size");
  return {
    kind: "sqlite",
    commit,
    db,
    membership: SINGLE_NODE,
    stores: {
      accounts: new SqliteAccountStore(db),
      requestCounts: new SqliteRequestCounts(db),
      faults: new SqliteFaultRuleStore(db),
      messages: new SqliteMessageStore(db, bodies),
      events,
      dlq: new SqliteDlqStore(db),
      queues: new SqliteQueueStore(db),
      schedules: new SqliteScheduleStore(db),
      flow: new SqliteFlowStore(db),
      flowKeys: new SqliteFlowKeyStore(db),
      groups: new SqliteUrlGroupStore(db),
      dedup: new SqliteDedupStore(db),
      rollups: new SqliteRollupStore(db),
      runs: new SqliteRunStore(db),
      waits: new SqliteWaitStore(db),
      search: createSearchStore(db),
      vector: createVectorStore(db),
      usageLedger: new SqliteUsageLedger(db),
    } satisfies Stores,
    services: opts.path ? [new BackgroundCheckpointer(db, opts.path, opts.log)] : [],
    probe: () => void probe.get(),
    sizeBytes: () => ({
      database: (pageCount.get()?.page_count ?? 0) * (pageSize.get()?.page_size ?? 0),
      wal: opts.path ? fileSize(`${opts.path}-wal`) : 0,
    }),
    close() {
      commit.flush();
      db.close();
    },
  };
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // no WAL file right now
  }
}
