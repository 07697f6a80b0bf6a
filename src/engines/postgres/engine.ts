import { hostname } from "node:os";
import type { SQL } from "bun";
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
import { PostgresTicks, type TxSql } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";
import { num } from "./values.ts";
import { PgRunStore } from "./workflow-runs.ts";
import { PgWaitStore } from "./workflow-waits.ts";

export interface PostgresEngineOptions {
  url: string;
  log: Logger;
  /** Connections of this node for reads and notifications (the writes and the heartbeat have theirs). */
  poolSize: number;
  /** Ticks of writes in flight at once, each on a connection of its own: the main thread builds one while PostgreSQL runs the others. */
  ticksInFlight: number;
  heartbeatMs: number;
  nodeTimeoutMs: number;
  /** The server clock (the engine stamps hand-backs with it). */
  now: () => number;
}

/** What the PostgreSQL engine adds to the boundary: the cluster it belongs to. */
export interface PostgresEngine extends PostgresStorage {
  readonly cluster: Cluster;
}

/**
 * How long a write may wait for a row another transaction holds: only its tick waits meanwhile,
 * never the node's HTTP, timers or heartbeats (which run on a connection of their own).
 */
export const LOCK_TIMEOUT_MS = 2_000;
/**
 * The longest a write's statement may run (a tick holds its row locks meanwhile): half the
 * default node timeout, which only the heartbeat's own connection decides.
 */
export const STATEMENT_TIMEOUT_MS = 2_500;

/**
 * Opens the PostgreSQL engine: checks the connection (a refusal is one StartError line), applies
 * the migrations once under an advisory lock, opens the connections of the ticks of writes and of
 * the heartbeat, listens for the other nodes' notifications, then loads the small tables every
 * node keeps in memory (see notifications.ts) and joins the cluster.
 */
export async function openPostgresEngine(o: PostgresEngineOptions): Promise<PostgresEngine> {
  const sql = await connect(o.url, o.poolSize);
  const opened: SQL[] = [sql];
  const closeAll = () => Promise.all(opened.map((pool) => pool.close().catch(() => {})));
  let writes: SQL;
  let beats: SQL;
  try {
    await migratePostgres(sql, postgresMigrations(MIGRATIONS, POSTGRES_MIGRATIONS));
    writes = await connect(o.url, o.ticksInFlight, {
      lock_timeout: `${LOCK_TIMEOUT_MS}ms`,
      statement_timeout: `${STATEMENT_TIMEOUT_MS}ms`,
    });
    opened.push(writes);
    // The heartbeat's own connection: no tick's lock wait nor a pool full of reads delays it, and its
    // own statements give up well within the node timeout.
    beats = await connect(o.url, 1, {
      lock_timeout: `${Math.max(200, Math.floor(o.nodeTimeoutMs / 5))}ms`,
      statement_timeout: `${Math.max(500, Math.floor(o.nodeTimeoutMs / 2))}ms`,
    });
    opened.push(beats);
  } catch (error) {
    await closeAll();
    throw error;
  }
  const nodeId = `${hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
  // A cached table that read its own rows again tells the table's watchers (through the notifications, built below).
  const watchers = { tell: (_table: string) => {} };
  const refreshed = (table: string) => watchers.tell(table);
  const tables = cachedTables(sql, refreshed);
  const scheduleTable = new CachedTable(sql, "schedules", ["account_id", "id"], scheduleRowOfPg, refreshed);
  const dueListeners: Array<(atMs?: number) => void> = [];
  const wake = (atMs?: number) => dueListeners.forEach((fn) => fn(atMs));
  // The partitions this node delivers change with the cluster's balance; the cluster is built last.
  const owned = { partitions: (): number[] => [] };
  const joined = { nodes: () => 1 };
  const messages = new PgMessageStore(sql, nodeId, () => owned.partitions(), o.now);
  // Messages made due by the set-based statements run before the commit count as the tick's writes.
  const dueInTick = (tick: TickTransaction, atMs: number) => {
    messages.noteWritten(tick, atMs);
    wake(atMs);
  };
  const promotions = new PgQueuePromotions(dueInTick);
  const releases = new PgFlowReleases(dueInTick);
  const events = new PgEventStore(sql);
  const dedup = new PgDedupStore(sql);
  const schedules = new PgScheduleStore(sql, scheduleTable);
  const waits = new PgWaitStore(sql);

  const stores = {
    accounts: new PgAccountStore(tables.accounts),
    requestCounts: new PgRequestCounts(sql),
    messages,
    events,
    dlq: new PgDlqStore(sql),
    queues: new PgQueueStore(sql, tables.queues, promotions),
    schedules,
    flow: new PgFlowStore(sql, messages, releases),
    flowKeys: new PgFlowKeyStore(tables.flowKeys, tables.rateStarts),
    groups: new PgUrlGroupStore(tables.groups, tables.endpoints),
    dedup,
    rollups: new PgRollupStore(sql),
    runs: new PgRunStore(sql),
    waits,
    search: new PgIndexStore(tables.search),
    vector: new PgIndexStore(tables.vector),
    usageLedger: new PgUsageLedger(tables.ledger),
    faults: new PgFaultRuleStore(tables.faultRules),
  } satisfies Stores;
  const cached = Object.values(tables);

  // With each tick's commit: the other nodes hear what became due and which tables changed.
  const notifyOthers = (tick: TickTransaction, tx: TxSql) => {
    const due = messages.takeTickDue(tick);
    if (due !== null) tx.queue("SELECT pg_notify($1, $2)", [DUE, `${nodeId}|${due}`]);
    const changed = cached.filter((t) => t.changedIn(tick)).map((t) => t.table);
    if (schedules.changedIn(tick)) changed.push("schedules");
    if (waits.waitersChangedIn(tick)) changed.push("workflow_waiters");
    if (changed.length > 0) tx.queue("SELECT pg_notify($1, $2)", [CONFIG, `${nodeId}|${changed.join(",")}`]);
  };
  // The set-based statements that read what the tick wrote go last.
  const ticks = new PostgresTicks({
    pool: writes,
    maxInFlight: o.ticksInFlight,
    parts: [...cached, schedules, messages, events, waits, promotions, releases],
    beforeCommit: notifyOthers,
  });

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
  const cluster = new Cluster(beats, {
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
    await closeAll();
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
      await notifications.stop();
      await closeAll();
    },
  };
}
