import type { Database } from "bun:sqlite";
import type { AccountStore } from "../accounts/store.ts";
import type { BackgroundService } from "../core/service.ts";
import type { DedupStore } from "../dedup/store.ts";
import type { DlqStore } from "../dlq/store.ts";
import type { FlowKeyStore } from "../flow-control/key-store.ts";
import type { FlowStore } from "../flow-control/store.ts";
import type { EventStore } from "../logs/store.ts";
import type { SearchStore } from "../management/search/store.ts";
import type { UsageFixtureLedger, VectorStore } from "../management/vector/store.ts";
import type { MessageStore } from "../messages/store.ts";
import type { RollupStore } from "../metrics/store.ts";
import type { QueueStore } from "../queues/store.ts";
import type { ScheduleStore } from "../schedules/store.ts";
import type { GroupCommit } from "../store/group-commit.ts";
import type { UrlGroupStore } from "../url-groups/store.ts";
import type { WaitStore } from "../workflows/wait-store.ts";
import type { RunStore } from "../workflows/store.ts";

/** Every domain's store, built once by the storage engine; the domains get theirs in their constructors. */
export interface Stores {
  accounts: AccountStore;
  messages: MessageStore;
  events: EventStore;
  dlq: DlqStore;
  queues: QueueStore;
  schedules: ScheduleStore;
  flow: FlowStore;
  /** Flow-control keys' settings (pause, pins) and rate windows. */
  flowKeys: FlowKeyStore;
  groups: UrlGroupStore;
  dedup: DedupStore;
  rollups: RollupStore;
  runs: RunStore;
  waits: WaitStore;
  search: SearchStore;
  vector: VectorStore;
  usageLedger: UsageFixtureLedger;
}

export type EngineKind = "sqlite" | "postgres";

/**
 * The storage boundary: where svcd's state lives. The composition root opens one engine and
 * builds everything else from its stores and its group commit; no domain sees a database handle.
 */
export interface StorageEngine {
  readonly kind: EngineKind;
  /** Every write requested in one tick commits in one transaction (see GroupCommit). */
  readonly commit: GroupCommit;
  readonly stores: Stores;
  /** Background work of the engine itself, started before and stopped after everything else. */
  readonly services: BackgroundService[];
  /** Throws when storage does not answer (the readiness probe). */
  probe(): void;
  /** Bytes the data takes on disk, and its write-ahead log (the metrics endpoint). */
  sizeBytes(): { database: number; wal: number };
  /** Commits what is queued and closes the database. */
  close(): void;
  /** The SQLite engine's database, for tests and fault drills; undefined on other engines. */
  readonly sqlite?: Database;
}
