import { hostname } from "node:os";
import type { Logger } from "../../core/log.ts";
import type { PostgresStorage, Stores } from "../engine.ts";
import { MIGRATIONS } from "../migrations.ts";
import { CachedTable } from "./cached-table.ts";
import { Cluster, NODE_NUMBERS, NODES_TABLE } from "./cluster.ts";
import { DlqIdSequence } from "../../core/ids.ts";
import { cachedTables, PgAccountStore, PgRequestCounts, PgFlowKeyStore, PgFlowReleases, PgFlowStore, PgIndexStore, PgQueuePromotions, PgQueueStore, PgUrlGroupStore, PgUsageLedger } from "./config-stores.ts";
import { connect } from "./connect.ts";
import { postgresMigrations } from "./ddl.ts";
import { PgDedupStore } from "./dedup.ts";
import { PgDlqStore } from "./dlq.ts";
import { PgEventStore } from "./events.ts";
import { ClusterQuestions } from "./questions.ts";
import { PgFaultRuleStore } from "./faults.ts";
import { PgMessageStore } from "./messages.ts";
import { migratePostgres } from "./migrate.ts";
import { CONFIG, DUE, Notifications } from "./notifications.ts";
import { PgRollupStore } from "./rollups.ts";
import { POSTGRES_MIGRATIONS } from "./schema.ts";
import { PgScheduleStore, scheduleRowOfPg } from "./schedules.ts";
import { PostgresTicks, TickScope, type TickSql } from "./tick.ts";
import { num } from "./values.ts";
import { PgRunStore } from "./workflow-runs.ts";
import { PgWaitStore } from "./workflow-waits.ts";
import { Writer } from "./writer.ts";

export interface PostgresEngineOptions {
  url: string;
  log: Logger;
  /** Connections of this node for reads, the heartbeat and notifications (writes have one of their own). */
  poolSize: number;
  heartbeatMs: number;
  nodeTimeoutMs: number;
  /** The server clock (the engine stamps hand-backs with it). */
  now: () => number;
}

/** What the PostgreSQL engine adds to the boundary: the cluster it belongs to. */
export interface PostgresEngine extends PostgresStorage {
  readonly cluster: Cluster;
}

/** How long a write may wait for a row another transaction holds (the main thread waits with it). */
const LOCK_TIMEOUT_MS = 5_000;
/** How long the main thread waits for PostgreSQL's answer to a write's statement before giving the tick up. */
const ANSWER_TIMEOUT_MS = 20_000;

/**
 * Opens the PostgreSQL engine: checks the connection (a refusal is one StartError line), applies
 * the migrations once under an advisory lock, starts the writer thread, listens for the other
 * nodes' notifications, then loads the small tables every node keeps in memory (see
 * notifications.ts) and joins the cluster.
 */
export async function openPostgresEngine(o: PostgresEngineOptions): Promise<PostgresEngine> {
  const sql = await connect(o.url, o.poolSize);
  let writer: Writer;
  try {
    await migratePostgres(sql, postgresMigrations(MIGRATIONS, POSTGRES_MIGRATIONS));
    writer = await Writer.open({ url: o.url, lockTimeoutMs: LOCK_TIMEOUT_MS, answerTimeoutMs: ANSWER_TIMEOUT_MS });
  } catch (error) {
    await sql.close().catch(() => {});
    throw error;
  }
  const nodeId = `${hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const scope = new TickScope(writer);
  // A cached table that read its own rows again tells the table's watchers (through the notifications, built below).
  const watchers = { tell: (_table: string) => {} };
  const refreshed = (table: string) => watchers.tell(table);
  const tables = cachedTables(sql, scope, refreshed);
  const scheduleTable = new CachedTable(sql, "schedules", ["account_id", "id"], scheduleRowOfPg, scope, refreshed);
  const dueListeners: Array<(atMs?: number) => void> = [];
  const wake = (atMs?: number) => dueListeners.forEach((fn) => fn(atMs));
  // The partitions this node delivers change with the cluster's balance; the cluster is built last.
  const owned = { partitions: (): number[] => [] };
  const joined = { nodes: () => 1 };
  const messages = new PgMessageStore(sql, scope, nodeId, () => owned.partitions(), o.now);
  // Messages made due by the set-based statements run before the commit count as the tick's writes.
  const dueInTick = (atMs: number) => {
    messages.noteWritten(atMs);
    wake(atMs);
  };
  const promotions = new PgQueuePromotions(dueInTick);
  const releases = new PgFlowReleases(dueInTick);
  const events = new PgEventStore(sql);
  const dlq = new PgDlqStore(sql, scope);
  const dedup = new PgDedupStore(sql, scope);
  const rollups = new PgRollupStore(sql, scope);
  const schedules = new PgScheduleStore(sql, scope, scheduleTable);
  const runs = new PgRunStore(sql, scope);
  const waits = new PgWaitStore(sql, scope);

  const stores = {
    accounts: new PgAccountStore(tables.accounts),
    requestCounts: new PgRequestCounts(sql, scope),
    messages,
    events,
    dlq,
    queues: new PgQueueStore(sql, tables.queues, promotions),
    schedules,
    flow: new PgFlowStore(sql, messages, releases),
    flowKeys: new PgFlowKeyStore(scope, tables.flowKeys, tables.rateStarts),
    groups: new PgUrlGroupStore(scope, tables.groups, tables.endpoints),
    dedup,
    rollups,
    runs,
    waits,
    search: new PgIndexStore(tables.search),
    vector: new PgIndexStore(tables.vector),
    usageLedger: new PgUsageLedger(scope, tables.ledger),
    faults: new PgFaultRuleStore(tables.faultRules),
  } satisfies Stores;
  const cached = Object.values(tables);

  // With each tick's commit: the other nodes hear what became due and which tables changed.
  const notifyOthers = (tx: TickSql) => {
    const due = messages.takeTickDue();
    if (due !== null) tx.queue("SELECT pg_notify($1, $2)", [DUE, `${nodeId}|${due}`]);
    const changed = cached.filter((t) => t.changedInTick).map((t) => t.table);
    if (schedules.changedInTick) changed.push("schedules");
    if (waits.waitersChangedInTick) changed.push("workflow_waiters");
    if (changed.length > 0) tx.queue("SELECT pg_notify($1, $2)", [CONFIG, `${nodeId}|${changed.join(",")}`]);
  };
  // In-memory changes are written in this order: small tables first (a queue before its messages
  // are promoted), then the set-based statements that read what the tick wrote.
  const ticks = new PostgresTicks(scope, [...cached, schedules, messages, events, waits, promotions, releases], notifyOthers);

  // Claims a failed tick left behind, released by a later one: due here as on the other nodes.
  ticks.onCommitted(() => {
    const released = messages.takeReleased();
    if (released !== null) wake(released);
  });

  const questions = new ClusterQuestions({ sql, nodeId, log: o.log, others: () => joined.nodes() - 1 });
  const notifications = new Notifications({
    sql,
    nodeId,
    log: o.log,
    tables: [...cached, scheduleTable],
    uncached: ["workflow_waiters", NODES_TABLE],
    onDue: (atMs) => {
      messages.noteDue(atMs ?? o.now());
      wake(atMs);
    },
    deafAfterMs: o.nodeTimeoutMs,
    questions,
  });
  const cluster = new Cluster(sql, {
    nodeId,
    host: hostname(),
    heartbeatMs: o.heartbeatMs,
    nodeTimeoutMs: o.nodeTimeoutMs,
    log: o.log,
    now: o.now,
    busyPartitions: () => messages.busyPartitions(),
    // Partitions taken over, messages handed back, the heartbeat's fallback poll: a claim looks.
    onDue: (atMs) => {
      messages.noteDue(atMs ?? o.now());
      wake(atMs);
    },
    maintenanceMs: 60_000,
    beforeLeave: () => ticks.flush(),
    afterBeat: () => notifications.check(),
    maintenance: async () => {
      await dedup.pruneExpired(o.now());
    },
  });
  owned.partitions = () => cluster.ownedPartitions();
  watchers.tell = (table) => notifications.tell(table);
  joined.nodes = () => cluster.nodes;
  // A node that left freed its partitions: they are taken at once.
  notifications.watch(NODES_TABLE, () => cluster.beatNow());
  try {
    await notifications.start();
  } catch (error) {
    await notifications.stop();
    writer.close();
    await sql.close().catch(() => {});
    throw error;
  }
  await cluster.join();

  return {
    kind: "postgres",
    commit: ticks,
    stores,
    cluster,
    sql,
    services: [cluster],
    membership: {
      onDue: (fn) => void dueListeners.push(fn),
      watch: (table, fn) => notifications.watch(table, fn),
      leads: () => cluster.isLeader,
      nodes: () => cluster.nodes,
      // Read at every id: a node presumed dead registers again, under another number if its own was taken.
      dlqIds: () => new DlqIdSequence(() => cluster.number, NODE_NUMBERS),
      ask: (topic, question) => questions.ask(topic, question),
      answer: (topic, fn) => questions.answer(topic, fn),
    },
    probe() {
      if (!cluster.healthy) throw new Error("PostgreSQL has not answered the heartbeat recently");
    },
    async sizeBytes() {
      const [row] = await sql`SELECT pg_database_size(current_database()) AS n`;
      return { database: num(row.n), wal: 0 };
    },
    async close() {
      await ticks.flush();
      ticks.close();
      writer.close();
      await notifications.stop();
      await sql.close();
    },
  };
}
