import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import type { AccountStorage, RequestCountStorage } from "../accounts/storage.ts";
import type { DlqIdSequence } from "../core/ids.ts";
import type { BackgroundService } from "../core/service.ts";
import type { DedupStorage } from "../dedup/storage.ts";
import type { DlqStorage } from "../dlq/storage.ts";
import type { FlowKeyStorage, FlowStorage } from "../flow-control/storage.ts";
import type { EventStorage } from "../logs/storage.ts";
import type { FaultRuleStorage } from "../faults/storage.ts";
import type { SearchStore } from "../management/search/storage.ts";
import type { UsageFixtureLedgerStorage, VectorStore } from "../management/vector/storage.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { RollupStorage } from "../metrics/storage.ts";
import type { QueueStorage } from "../queues/storage.ts";
import type { ScheduleStorage } from "../schedules/storage.ts";
import type { Transactor } from "../store/transactor.ts";
import type { UrlGroupStorage } from "../url-groups/storage.ts";
import type { RunStorage, WaitStorage } from "../workflows/storage.ts";

/** Every domain's store, built once by the storage engine; the domains get theirs in their constructors. */
export interface Stores {
  accounts: AccountStorage;
  /** The plan's burst and daily counts, every node's. */
  requestCounts: RequestCountStorage;
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
  /** The test double's fault rules, shared by every node. */
  faults: FaultRuleStorage;
}

export type EngineKind = StorageEngine["kind"];

/**
 * What a node needs to know of the others sharing its storage. One node alone (SQLite, or the
 * single-node answers below) has nobody to hear from: it leads, and counts itself.
 */
export interface ClusterMembership {
  /** Another node made messages due (at `atMs`, or now): the dispatcher should look. */
  onDue(fn: (atMs?: number) => void): void;
  /** Another node changed a table this one keeps in memory (it is reloaded first). */
  watch(table: string, fn: () => void): void;
  /** This node runs the maintenance every node would otherwise repeat (retention). */
  leads(): boolean;
  /** Nodes sharing the storage now, this one included. */
  nodes(): number;
  /** DLQ ids of this node, never equal to another node's; undefined: the plain sequence. */
  dlqIds(): DlqIdSequence | undefined;
  /** Asks every other node `question` on `topic`; resolves with the answers that came within a moment. */
  ask(topic: string, question: string): Promise<string[]>;
  /** How this node answers the others' questions on `topic`. */
  answer(topic: string, fn: (question: string) => Promise<string>): void;
}

/** The membership of a node that shares its storage with nobody. */
export const SINGLE_NODE: ClusterMembership = {
  onDue: () => {},
  watch: () => {},
  leads: () => true,
  nodes: () => 1,
  dlqIds: () => undefined,
  ask: () => Promise.resolve([]),
  answer: () => {},
};

/**
 * The storage boundary: where svcd's state lives. The composition root opens one engine and
 * builds everything else from its stores and its group commit; no domain sees a database handle.
 */
interface EngineBase {
  /** Every write requested in one tick commits in one transaction (see Transactor). */
  readonly commit: Transactor;
  readonly stores: Stores;
  readonly membership: ClusterMembership;
  /** Background work of the engine itself, started before and stopped after everything else. */
  readonly services: BackgroundService[];
  /** Throws when storage does not answer (the readiness probe). */
  probe(): void;
  /** Bytes the data takes on disk, and its write-ahead log (the metrics endpoint). */
  sizeBytes(): { database: number; wal: number } | Promise<{ database: number; wal: number }>;
  /** Commits what is queued and closes the database. */
  close(): void | Promise<void>;
}

/** The embedded engine; its database is there for tests and fault drills. */
export interface SqliteStorage extends EngineBase {
  readonly kind: "sqlite";
  readonly db: Database;
}

/** The shared engine; its pool is there for tests and tools that inspect the database. */
export interface PostgresStorage extends EngineBase {
  readonly kind: "postgres";
  readonly sql: SQL;
}

export type StorageEngine = SqliteStorage | PostgresStorage;
