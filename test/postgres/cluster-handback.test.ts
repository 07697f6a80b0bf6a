import { afterAll, beforeAll, expect, test } from "bun:test";
import type { SQL } from "bun";
import type { Logger } from "../../src/core/log.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";
import { Cluster } from "../../src/engines/postgres/cluster.ts";
import { connect } from "../../src/engines/postgres/connect.ts";
import { postgresMigrations } from "../../src/engines/postgres/ddl.ts";
import { migratePostgres } from "../../src/engines/postgres/migrate.ts";
import { POSTGRES_MIGRATIONS } from "../../src/engines/postgres/schema.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * The leader's hand-back and a partition take-over are one statement each (a write of the node
 * may be waiting for the message rows they lock). The hand-back deletes the dead nodes and, in
 * the same snapshot, must count them out of the live set: the claims of a dead node and of a node
 * never registered go back, a live node's stay; the take-over makes the partitions' held
 * messages due again.
 */

let sql: SQL;
let seq = 0;

beforeAll(async () => {
  sql = await connect(await freshDatabase(), 3);
  await migratePostgres(sql, postgresMigrations(MIGRATIONS, POSTGRES_MIGRATIONS));
});

afterAll(async () => {
  await sql.close();
});

async function message(fields: Record<string, unknown>): Promise<string> {
  const row = {
    id: `m${seq++}`,
    account_id: "a",
    kind: "publish",
    state: "CREATED",
    not_before: 0,
    created_at: 5,
    max_retries: 3,
    url: "http://127.0.0.1:1/",
    method: "POST",
    headers: "[]",
    body: new Uint8Array(0),
    extra: "{}",
    ...fields,
  };
  await sql`INSERT INTO messages ${sql(row)}`;
  return row.id;
}

test("the leader hands back what dead and unregistered nodes held, not what a live one holds; a take-over releases held messages", async () => {
  await sql`INSERT INTO cluster_nodes (node_id, host, number, heartbeat_at)
    VALUES ('dead', 'h', 5, now() - interval '1 hour'), ('alive', 'h', 6, now() + interval '1 hour')`;
  await sql`UPDATE cluster_partitions SET node_id = 'dead', expires_at = now() - interval '1 hour' WHERE part < 10`;
  await sql`UPDATE cluster_partitions SET node_id = 'alive', expires_at = now() + interval '1 hour' WHERE part BETWEEN 10 AND 19`;
  await sql`UPDATE cluster_partitions SET node_id = 'ghost', expires_at = now() + interval '1 hour' WHERE part IN (20, 21)`;
  const ofDead = await message({ state: "ACTIVE", claimed_by: "dead", retried: 1 });
  const ofGhost = await message({ state: "ACTIVE", claimed_by: "ghost" });
  const ofAlive = await message({ state: "ACTIVE", claimed_by: "alive" });
  const held = await message({ state: "HELD", flow_key: "k", part: 3 });

  const warnings: Array<{ message: string; fields: unknown }> = [];
  const log: Logger = {
    debug() {},
    info() {},
    warn: (message, fields) => void warnings.push({ message, fields }),
    error: (message, fields) => void warnings.push({ message, fields }),
    enabled: () => true,
  };
  const cluster = new Cluster(sql, {
    nodeId: "me",
    host: "h",
    heartbeatMs: 100,
    nodeTimeoutMs: 1000,
    log,
    now: () => 1000,
    busyPartitions: () => new Set(),
    onDue: () => {},
    maintenance: async () => {},
    maintenanceMs: 3_600_000,
    beforeLeave: async () => {},
    afterBeat: async () => {},
  });
  await cluster.join();
  cluster.start();
  try {
    // The leader judges once its own heartbeats went through for longer than the node timeout.
    // The live node's heartbeat is an hour ahead: however slow this machine, it stays fresh.
    await waitUntil(
      async () => {
        const [row] = await sql`SELECT state FROM messages WHERE id = ${held}`;
        return row.state !== "HELD" && warnings.length > 0;
      },
      { timeoutMs: 20_000, what: "the dead node handed back and its partition taken over" },
    );
  } finally {
    await cluster.stop();
  }
  const rows = await sql`SELECT id, state, claimed_by, dispatch_at FROM messages ORDER BY seq`;
  const byId = new Map(rows.map((r: { id: string }) => [r.id, r]));
  expect(byId.get(ofDead)).toMatchObject({ state: "RETRY", claimed_by: null, dispatch_at: "1000" });
  expect(byId.get(ofGhost)).toMatchObject({ state: "CREATED", claimed_by: null, dispatch_at: "1000" });
  expect(byId.get(ofAlive)).toMatchObject({ state: "ACTIVE", claimed_by: "alive" });
  // Due again as of its creation, ahead of the key's newer messages.
  expect(byId.get(held)).toMatchObject({ state: "CREATED", dispatch_at: "5" });
  expect(warnings).toEqual([
    { message: "nodes presumed dead; their messages are handed back", fields: { nodes: ["dead"], messages: 2 } },
  ]);
  expect(await sql`SELECT node_id FROM cluster_nodes ORDER BY node_id`).toEqual([{ node_id: "alive" }]);
  const owners = await sql`SELECT DISTINCT node_id FROM cluster_partitions WHERE node_id IS NOT NULL ORDER BY node_id`;
  expect(owners.map((r: { node_id: string }) => r.node_id)).toEqual(["alive"]);
});
