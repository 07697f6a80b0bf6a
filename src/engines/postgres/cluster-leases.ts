import type { SQL } from "bun";
import { dueAgainStateSql } from "../../model/message.ts";
import { num } from "./values.ts";

/**
 * The leader's duty: nodes whose heartbeat is older than `timeout` are gone; their messages and
 * partitions go back, with those of nodes not registered at all (dead before their first beat was
 * seen). One statement: it locks messages a write of this node may be waiting for, and must finish
 * without it. Its parts share one snapshot, where the deleted nodes are still registered: the live
 * set is what remains once the dead are taken out.
 */
export async function handBackDead(sql: SQL, timeout: string, nowMs: number): Promise<{ handed: number; dead: string[] }> {
  const dueAgain = sql.unsafe(dueAgainStateSql());
  const [row] = await sql`
    WITH dead AS (
      DELETE FROM cluster_nodes WHERE heartbeat_at < now() - ${timeout}::interval RETURNING node_id
    ), live AS (
      SELECT node_id FROM cluster_nodes WHERE node_id NOT IN (SELECT node_id FROM dead)
    ), handed AS (
      UPDATE messages SET state = ${dueAgain}, dispatch_at = ${nowMs}, claimed_by = NULL
      WHERE claimed_by IS NOT NULL AND state = 'ACTIVE' AND claimed_by NOT IN (SELECT node_id FROM live)
      RETURNING 1
    ), freed AS (
      UPDATE cluster_partitions SET node_id = NULL
      WHERE node_id IS NOT NULL AND node_id NOT IN (SELECT node_id FROM live)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM handed) AS handed,
      (SELECT coalesce(string_agg(node_id, ',' ORDER BY node_id), '') FROM dead) AS dead`;
  const dead = String(row.dead);
  return { handed: num(row.handed), dead: dead === "" ? [] : dead.split(",") };
}

/**
 * Takes up to `count` free partitions for `nodeId` (and, while `judging`, leases another node let
 * expire), in one statement as in `handBackDead`. Held back by the previous owner's in-memory
 * limits, the partitions' held messages are due again, under this node's. Returns the partitions.
 */
export async function takePartitions(
  sql: SQL,
  o: { nodeId: string; timeout: string; judging: boolean; count: number; nowMs: number },
): Promise<number[]> {
  const dueAgain = sql.unsafe(dueAgainStateSql());
  const rows = await sql`
    WITH taken AS (
      UPDATE cluster_partitions SET node_id = ${o.nodeId}, expires_at = now() + ${o.timeout}::interval
      WHERE part IN (
        SELECT part FROM cluster_partitions WHERE node_id IS NULL OR (${o.judging} AND expires_at < now())
        ORDER BY part LIMIT ${o.count} FOR UPDATE SKIP LOCKED)
      RETURNING part
    ), released AS (
      UPDATE messages SET state = ${dueAgain}, dispatch_at = LEAST(created_at, ${o.nowMs}::bigint)
      WHERE state = 'HELD' AND part IN (SELECT part FROM taken)
      RETURNING 1
    )
    SELECT part FROM taken`;
  return rows.map((r: { part: unknown }) => num(r.part));
}
