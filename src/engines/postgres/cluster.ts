import type { SQL } from "bun";
import type { Logger } from "../../core/log.ts";
import type { BackgroundService } from "../../core/service.ts";
import { dueAgainStateSql } from "../../model/message.ts";
import { handBackDead, takePartitions } from "./cluster-leases.ts";
import { CONFIG } from "./notifications.ts";
import { PARTITIONS } from "./schema.ts";
import { num } from "./values.ts";

export interface ClusterOptions {
  nodeId: string;
  host: string;
  /** How often a node renews its heartbeat and its partitions (and polls for due work). */
  heartbeatMs: number;
  /** A node whose heartbeat is older is presumed dead; also how long a partition lease lasts. */
  nodeTimeoutMs: number;
  log: Logger;
  /** The server clock's time (what `dispatch_at` is measured in). */
  now: () => number;
  /** Which partitions hold attempts of this node right now (they are not given away). */
  busyPartitions: () => Set<number>;
  /** Work may be due: another node's notification, a hand-back, or the fallback poll. */
  onDue: (atMs?: number) => void;
  /** The leader's maintenance (retention, expired deduplication keys), at most every `maintenanceMs`. */
  maintenance: () => Promise<void>;
  maintenanceMs: number;
  /**
   * Commits what this node has queued, before it leaves: an outcome recorded after the hand-back
   * would find its message handed to the others (delivered again, its rate start lost).
   */
  beforeLeave: () => Promise<void>;
  /** After each heartbeat that went through (the notifications' check that they are still heard). */
  afterBeat: () => Promise<void>;
}

/**
 * Several nodes on one PostgreSQL act as one service (the shape River uses): every node renews a
 * heartbeat row; one node holds a leader lease and hands the in-flight messages of nodes whose
 * heartbeat stopped back to the others (due again at once), frees their partitions and runs the
 * maintenance; flow-control partitions are leased to nodes, about an equal share each, so that
 * every message of one key is delivered by one node whose in-memory limits then hold exactly.
 *
 * Silence the database caused is not a node's death: when PostgreSQL is down or unreachable, every
 * heartbeat stops at once, and the first node back would find all the others "late". So a node
 * judges the others (presumes them dead, takes over their expired partitions) only once its own
 * heartbeats have gone through one after the other, without a failure or a long gap (`maxGap`),
 * for longer than the node timeout: a node late by then was silent while the database answered.
 * A node that finds itself presumed dead anyway (its row is gone) registers again, under its own
 * number when it is free.
 */
export class Cluster implements BackgroundService {
  readonly name = "cluster membership";
  private timer: ReturnType<typeof setInterval> | null = null;
  private owned = new Map<number, number>();
  private leading = false;
  private liveNodes = 1;
  private lastBeat = 0;
  /** When this node's heartbeats started going through without a break (null: the last one failed). */
  private connectedSince: number | null = null;
  /** When this node's heartbeat was last written. */
  private lastWritten = 0;
  /**
   * The longest pause between two heartbeats of this node that still counts as connected: an
   * outage this node did not notice (shorter than this) leaves another node's heartbeat at most
   * this plus one interval old, and so within the timeout.
   */
  private readonly maxGap: number;
  private lastMaintenance = 0;
  private beating: Promise<void> | null = null;
  private beatAgain = false;
  private stopped = false;

  constructor(
    private readonly sql: SQL,
    private readonly o: ClusterOptions,
  ) {
    this.maxGap = Math.max(2 * o.heartbeatMs, o.nodeTimeoutMs - 2 * o.heartbeatMs);
  }

  get nodeId(): string {
    return this.o.nodeId;
  }

  /** Partitions this node may deliver now: leased, and renewed recently enough by its own clock. */
  ownedPartitions(): number[] {
    const validAfter = performance.now() - (this.o.nodeTimeoutMs - this.o.heartbeatMs);
    return [...this.owned].filter(([, renewedAt]) => renewedAt > validAfter).map(([part]) => part);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Nodes whose heartbeat is current (this one included), as of the last beat; every registered
   * one while this node may not judge.
   */
  get nodes(): number {
    return this.liveNodes;
  }

  /** The last heartbeat went through (the readiness probe). */
  get healthy(): boolean {
    return performance.now() - this.lastBeat < this.o.nodeTimeoutMs;
  }

  /** The node's number, unique among the live nodes (below NODE_NUMBERS). */
  number = 0;

  /** Registers the node with the lowest free number and takes its first partitions before delivery starts. */
  async join(): Promise<void> {
    await this.register(0);
    await this.beat();
  }

  /** Inserts this node's row, with the number `preferred` if it is free, else the lowest free one. */
  private async register(preferred: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const [row] = await this.sql`
          INSERT INTO cluster_nodes (node_id, host, number)
          SELECT ${this.o.nodeId}, ${this.o.host}, n FROM generate_series(0, ${NODE_NUMBERS - 1}) n
          WHERE n NOT IN (SELECT number FROM cluster_nodes WHERE number IS NOT NULL)
          ORDER BY n <> ${preferred}, n LIMIT 1
          RETURNING number`;
        if (!row) throw new Error(`more than ${NODE_NUMBERS} nodes share this database`);
        this.number = num(row.number);
        return;
      } catch (error) {
        // Two nodes took the same number at the same moment: the loser looks again.
        if ((error as { errno?: string }).errno !== "23505" || attempt >= 20) throw error;
      }
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.o.heartbeatMs);
  }

  /** Leaves: what this node still holds is handed back, its partitions and leadership freed. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.beating?.catch(() => {});
    await this.o.beforeLeave().catch(() => {});
    try {
      await this.sql.begin(async (tx) => {
        // What it still holds is due again now, on the others.
        await tx`
          UPDATE messages SET state = ${tx.unsafe(dueAgainStateSql())}, dispatch_at = ${this.o.now()}, claimed_by = NULL
          WHERE claimed_by = ${this.o.nodeId} AND state = 'ACTIVE'`;
        await tx`UPDATE cluster_partitions SET node_id = NULL WHERE node_id = ${this.o.nodeId}`;
        await tx`DELETE FROM cluster_leader WHERE node_id = ${this.o.nodeId}`;
        await tx`DELETE FROM cluster_nodes WHERE node_id = ${this.o.nodeId}`;
        // Heard at the commit: the others beat now (see beatNow), not at their next heartbeat.
        await tx`SELECT pg_notify(${CONFIG}, ${`${this.o.nodeId}|${NODES_TABLE}`})`;
      });
    } catch (error) {
      const line = "leaving the cluster failed; the leader hands this node's messages back after its timeout";
      this.o.log.warn(line, { error: String(error) });
    }
  }

  /**
   * Another node left: beats now rather than at the next interval (taking the partitions it freed,
   * and the beat's poll finding the messages it handed back), and once more after a beat under
   * way, which may have read before the other node's leave.
   */
  beatNow(): void {
    if (this.stopped) return;
    if (this.beating) this.beatAgain = true;
    else void this.tick();
  }

  private async tick(): Promise<void> {
    if (this.beating || this.stopped) return;
    this.beating = this.beat()
      // Not waited for, and no part of the heartbeat: its failure says nothing of this node's liveness.
      .then(() => void this.o.afterBeat().catch(() => {}))
      .catch((error) => {
        this.connectedSince = null;
        const message = String((error as Error)?.message ?? error);
        this.o.log.warn("cluster heartbeat failed; trying again", { error: message });
      })
      .finally(() => (this.beating = null));
    await this.beating;
    if (this.beatAgain) {
      this.beatAgain = false;
      void this.tick();
      return;
    }
    // The fallback poll: a notification lost on a dropped connection delays work by one beat.
    if (!this.stopped) this.o.onDue();
  }

  private async beat(): Promise<void> {
    const started = performance.now();
    const { nodeId, nodeTimeoutMs } = this.o;
    const timeout = `${nodeTimeoutMs} milliseconds`;
    const [me] = await this.sql`
      UPDATE cluster_nodes SET heartbeat_at = now() WHERE node_id = ${nodeId} RETURNING node_id`;
    if (!me) {
      // Presumed dead by the leader: what this node held went back to the others (its late
      // outcomes no longer match and are ignored). It takes part again from here.
      this.o.log.warn("this node was presumed dead (its heartbeat was late); it registers again", {
        node: nodeId,
        number: this.number,
      });
      await this.register(this.number);
    }
    const written = performance.now();
    if (this.connectedSince === null || written - this.lastWritten > this.maxGap) this.connectedSince = written;
    this.lastWritten = written;
    // Long enough through without a break that a late heartbeat is the other node's silence.
    const judging = written - this.connectedSince > nodeTimeoutMs;
    const [leader] = await this.sql`
      INSERT INTO cluster_leader (id, node_id, expires_at) VALUES (1, ${nodeId}, now() + ${timeout}::interval)
      ON CONFLICT (id) DO UPDATE SET node_id = excluded.node_id, expires_at = excluded.expires_at
        WHERE cluster_leader.node_id = excluded.node_id OR cluster_leader.expires_at < now()
      RETURNING node_id`;
    this.leading = leader?.node_id === nodeId;
    if (this.leading && judging) await this.lead(timeout);
    // Counting a late node out is a judgement too: until then every registered node counts.
    const [live] = await this.sql`
      SELECT count(*) FILTER (WHERE heartbeat_at >= now() - ${timeout}::interval) AS fresh, count(*) AS registered
      FROM cluster_nodes`;
    this.liveNodes = Math.max(1, num(judging ? live.fresh : live.registered));
    await this.balance(started, timeout, judging);
    this.lastBeat = started;
    if (this.leading && performance.now() - this.lastMaintenance >= this.o.maintenanceMs) {
      this.lastMaintenance = performance.now();
      const failed = (error: unknown) => this.o.log.error("maintenance failed; trying again later", { error: String(error) });
      await this.o.maintenance().catch(failed);
    }
  }

  /**
   * The leader's duty: nodes whose heartbeat stopped are gone; their messages and partitions go
   * back, with those of nodes not registered at all (dead before their first beat was seen). One
   * statement: it locks messages a write of this node may be waiting for, and must finish without
   * this thread. Its parts share one snapshot, where the deleted nodes are still registered: the
   * live set is what remains once the dead are taken out.
   */
  private async lead(timeout: string): Promise<void> {
    const { handed, dead } = await handBackDead(this.sql, timeout, this.o.now());
    if (dead.length > 0) this.o.log.warn("nodes presumed dead; their messages are handed back", { nodes: dead, messages: handed });
    if (handed > 0) {
      await this.sql.notify("svcd_due", `${this.o.nodeId}|${this.o.now()}`);
      this.o.onDue();
    }
  }

  /**
   * Renews this node's partitions, takes free ones up to an equal share, and gives back the ones
   * above its share that hold no attempt of this node (a partition changes owner only while idle
   * here, so one key never has two nodes delivering at once). A lease another node let expire is
   * taken only while `judging` (see the class comment).
   */
  private async balance(started: number, timeout: string, judging: boolean): Promise<void> {
    const { nodeId } = this.o;
    const share = Math.ceil(PARTITIONS / this.liveNodes);
    const renewed = await this.sql`
      UPDATE cluster_partitions SET expires_at = now() + ${timeout}::interval WHERE node_id = ${nodeId} RETURNING part`;
    const mine = new Map<number, number>(renewed.map((r: { part: unknown }) => [num(r.part), started]));
    if (mine.size > share) {
      const busy = this.o.busyPartitions();
      const extra = [...mine.keys()].filter((p) => !busy.has(p)).slice(0, mine.size - share);
      if (extra.length > 0) {
        await this.sql`
          UPDATE cluster_partitions SET node_id = NULL WHERE node_id = ${nodeId} AND part = ANY(${extra}::int[])`;
        for (const p of extra) mine.delete(p);
      }
    } else if (mine.size < share) {
      const taken = await takePartitions(this.sql, { nodeId, timeout, judging, count: share - mine.size, nowMs: this.o.now() });
      for (const p of taken) mine.set(p, started);
      if (taken.length > 0) this.o.onDue();
    }
    this.owned = mine;
  }
}

/** The table named in the notification a leaving node sends (see `Cluster.beatNow`). */
export const NODES_TABLE = "cluster_nodes";

/** How many nodes may share a database (their numbers are 0 .. NODE_NUMBERS - 1). */
export const NODE_NUMBERS = 1000;
