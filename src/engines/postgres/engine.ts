import { hostname } from "node:os";
import type { SQL } from "bun";
import type { Logger } from "../../core/log.ts";
import type { Stores, StorageEngine } from "../engine.ts";
import { MIGRATIONS } from "../migrations.ts";
import { CachedTable } from "./cached-table.ts";
import { Cluster, NODE_NUMBERS } from "./cluster.ts";
import { DlqIdSequence } from "../../core/ids.ts";
import { cachedTables, PgAccountStore, PgFlowKeyStore, PgFlowReleases, PgFlowStore, PgIndexStore, PgQueuePromotions, PgQueueStore, PgUrlGroupStore, PgUsageLedger } from "./config-stores.ts";
import { connect } from "./connect.ts";
import { postgresMigrations } from "./ddl.ts";
import { PgDedupStore } from "./dedup.ts";
import { PgDlqStore } from "./dlq.ts";
import { PgEventStore } from "./events.ts";
import { PgMessageStore } from "./messages.ts";
import { migratePostgres } from "./migrate.ts";
import { CONFIG, DUE, Notifications } from "./notifications.ts";
import { PgRollupStore } from "./rollups.ts";
import { POSTGRES_MIGRATIONS } from "./schema.ts";
import { PgScheduleStore, scheduleRowOfPg } from "./schedules.ts";
import { PostgresTicks } from "./tick.ts";
import { num } from "./values.ts";
import { PgWorkflowStore } from "./workflows.ts";

export interface PostgresEngineOptions {
  url: string;
  log: Logger;
  /** Connections of this node: one for the tick in flight, the rest for reads and the heartbeat. */
  poolSize: number;
  heartbeatMs: number;
  nodeTimeoutMs: number;
  /** The server clock (the engine stamps hand-backs with it). */
  now: () => number;
}

/** What the PostgreSQL engine adds to the boundary: the cluster it belongs to, and change notifications. */
export interface PostgresEngine extends StorageEngine {
  readonly cluster: Cluster;
  readonly sql: SQL;
}

/**
 * Opens the PostgreSQL engine: checks the connection (a refusal is one StartError line), applies
 * the migrations once under an advisory lock, listens for the other nodes' notifications, then
 * loads the small tables every node keeps in memory (see notifications.ts) and joins the cluster.
 */
export async function openPostgresEngine(o: PostgresEngineOptions): Promise<PostgresEngine> {
  const sql = await connect(o.url, o.poolSize);
  try {
    await migratePostgres(sql, postgresMigrations(MIGRATIONS, POSTGRES_MIGRATIONS));
  } catch (error) {
    await sql.close().catch(() => {});
    throw error;
  }
  const nodeId = `${hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const tables = cachedTables(sql);
  const scheduleTable = new CachedTable(sql, "schedules", ["account_id", "id"], scheduleRowOfPg);
  const ticks = new PostgresTicks(sql);

  let cluster!: Cluster;
  const messages = new PgMessageStore(sql, nodeId, () => cluster.ownedPartitions(), o.now);
  const events = new PgEventStore(sql);
  const dlq = new PgDlqStore(sql);
  const dedup = new PgDedupStore(sql);
  const rollups = new PgRollupStore(sql);
  const promotions = new PgQueuePromotions(messages);
  const releases = new PgFlowReleases(messages);
  const schedules = new PgScheduleStore(sql, scheduleTable);
  const workflows = new PgWorkflowStore(sql, messages);
  const dueListeners: Array<(atMs?: number) => void> = [];
  const wake = (atMs?: number) => dueListeners.forEach((fn) => fn(atMs));
  promotions.onPromoted = wake;
  releases.onReleased = wake;

  const stores = {
    accounts: new PgAccountStore(tables.accounts),
    messages,
    events,
    dlq,
    queues: new PgQueueStore(sql, tables.queues, promotions),
    schedules,
    flow: new PgFlowStore(sql, messages, releases),
    flowKeys: new PgFlowKeyStore(tables.flowKeys, tables.rateStarts),
    groups: new PgUrlGroupStore(tables.groups, tables.endpoints),
    dedup,
    rollups,
    runs: workflows.runStore,
    waits: workflows.waitStore,
    search: new PgIndexStore(tables.search),
    vector: new PgIndexStore(tables.vector),
    usageLedger: new PgUsageLedger(tables.ledger),
  } satisfies Stores;
  // The order changes are written in: small tables first (a queue before its messages), the
  // messages, what rides on them, then the set-based follow-ups that read what was just written.
  // Workflow runs load after the messages (a message's run is read with it) and before the DLQ
  // (runs are locked before DLQ entries, in every tick).
  const cached = [tables.accounts, tables.groups, tables.endpoints, tables.queues, tables.flowKeys, tables.rateStarts, tables.search, tables.vector, tables.ledger];
  ticks.register([...cached, schedules, messages, workflows, events, dlq, dedup, rollups, promotions, releases]);

  // Claims a failed tick left behind, released by a later one: due here as on the other nodes.
  ticks.onCommitted(() => {
    const released = messages.takeReleased();
    if (released !== null) wake(released);
  });

  // With each tick's commit: the other nodes hear what became due and which tables changed.
  ticks.beforeCommit = async (tx) => {
    const due = messages.takeTickDue();
    if (due !== null) await tx.notify(DUE, `${nodeId}|${due}`);
    const changed = cached.filter((t) => t.changedInTick).map((t) => t.table);
    if (schedules.changedInTick) changed.push("schedules");
    if (workflows.waitersChangedInTick) changed.push("workflow_waiters");
    if (changed.length > 0) await tx.notify(CONFIG, `${nodeId}|${changed.join(",")}`);
  };

  cluster = new Cluster(sql, {
    nodeId,
    host: hostname(),
    heartbeatMs: o.heartbeatMs,
    nodeTimeoutMs: o.nodeTimeoutMs,
    log: o.log,
    now: o.now,
    busyPartitions: () => messages.busyPartitions(),
    onDue: wake,
    maintenanceMs: 60_000,
    beforeLeave: () => ticks.flush(),
    afterBeat: () => notifications.check(),
    maintenance: async () => {
      await dedup.pruneExpired(o.now());
    },
  });
  const notifications = new Notifications({
    sql,
    nodeId,
    log: o.log,
    tables: [...cached, scheduleTable],
    uncached: ["workflow_waiters"],
    onDue: (atMs) => {
      messages.noteDue(atMs ?? o.now());
      wake(atMs);
    },
    deafAfterMs: o.nodeTimeoutMs,
  });
  try {
    await notifications.start();
  } catch (error) {
    await notifications.stop();
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
    probe() {
      if (!cluster.healthy) throw new Error("PostgreSQL has not answered the heartbeat recently");
    },
    async sizeBytes() {
      const [row] = await sql`SELECT pg_database_size(current_database()) AS n`;
      return { database: num(row.n), wal: 0 };
    },
    onDue: (fn) => void dueListeners.push(fn),
    watch: (table, fn) => notifications.watch(table, fn),
    leads: () => cluster.isLeader,
    // Read at every id: a node presumed dead registers again, under another number if its own was taken.
    dlqIds: () => new DlqIdSequence(() => cluster.number, NODE_NUMBERS),
    nodes: () => cluster.nodes,
    async close() {
      await ticks.flush();
      ticks.close();
      await notifications.stop();
      await sql.close();
    },
  };
}
