import type { Database } from "bun:sqlite";
import type { AccountStorage } from "../accounts/store.ts";
import type { DlqIdSequence } from "../core/ids.ts";
import type { BackgroundService } from "../core/service.ts";
import type { DedupStorage } from "../dedup/store.ts";
import type { DlqStorage } from "../dlq/store.ts";
import type { FlowKeyStorage } from "../flow-control/key-store.ts";
import type { FlowStorage } from "../flow-control/store.ts";
import type { EventStorage } from "../logs/store.ts";
import type { SearchStore } from "../management/search/store.ts";
import type { UsageFixtureLedgerStorage, VectorStore } from "../management/vector/store.ts";
import type { MessageStorage } from "../messages/store.ts";
import type { RollupStorage } from "../metrics/store.ts";
import type { QueueStorage } from "../queues/store.ts";
import type { ScheduleStorage } from "../schedules/store.ts";
import type { Transactor } from "../store/group-commit.ts";
import type { UrlGroupStorage } from "../url-groups/store.ts";
import type { WaitStorage } from "../workflows/wait-store.ts";
import type { RunStorage } from "../workflows/store.ts";

/** Every domain's store, built once by the storage engine; the domains get theirs in their constructors. */
export interface Stores {
  accounts: AccountStorage;
  messages: MessageStorage;
  events: EventStorage;
  dlq: DlqStorage;
  queues: QueueStorage;
  schedules: ScheduleStorage;
  flow: FlowStorage;
  /** Flow-control keys' settings (pause, pins) and rate windows. */
  flowKeys: FlowKeyStorage;
  groups: UrlGroupStorage;
  dedup: DedupStorage;
  rollups: RollupStorage;
  runs: RunStorage;
  waits: WaitStorage;
  search: SearchStore;
  vector: VectorStore;
  usageLedger: UsageFixtureLedgerStorage;
}

export type EngineKind = "sqlite" | "postgres";

/**
 * The storage boundary: where svcd's state lives. The composition root opens one engine and
 * builds everything else from its stores and its group commit; no domain sees a database handle.
 */
export interface StorageEngine {
  readonly kind: EngineKind;
  /** Every write requested in one tick commits in one transaction (see Transactor). */
  readonly commit: Transactor;
  readonly stores: Stores;
  /** Background work of the engine itself, started before and stopped after everything else. */
  readonly services: BackgroundService[];
  /** Throws when storage does not answer (the readiness probe). */
  probe(): void;
  /** Bytes the data takes on disk, and its write-ahead log (the metrics endpoint). */
  sizeBytes(): { database: number; wal: number } | Promise<{ database: number; wal: number }>;
  /** Commits what is queued and closes the database. */
  close(): void | Promise<void>;
  /** Another process made messages due (at `atMs`, or now): the dispatcher should look. Shared engines only. */
  onDue?(fn: (atMs?: number) => void): void;
  /** Another process changed a table this one keeps in memory (it is reloaded first). Shared engines only. */
  watch?(table: string, fn: () => void): void;
  /** This process runs the maintenance every process would otherwise repeat (retention). */
  leads?(): boolean;
  /** Processes sharing the storage now, this one included. */
  nodes?(): number;
  /** DLQ ids of this process, never equal to another process's (several share the storage). */
  dlqIds?(): DlqIdSequence;
  /** The SQLite engine's database, for tests and fault drills; undefined on other engines. */
  readonly sqlite?: Database;
}
