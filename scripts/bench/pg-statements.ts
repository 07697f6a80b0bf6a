/**
 * Where PostgreSQL's own time goes while svcd delivers end to end on one node: a PostgreSQL of
 * its own with `pg_stat_statements`, one `endToEndRun`, then the statements by total execution
 * time (µs per message delivered, share of all the statements' time, calls, rows).
 *
 *   bun scripts/bench/pg-statements.ts [messages]
 */
import { SQL } from "bun";
import { freePort, startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { endToEndRun } from "./measure-end-to-end.ts";
import { SinkClient, startSink, startSvcd } from "./procs.ts";

const messages = Number(process.argv[2] ?? 20000);
const port = await freePort();
const password = "svcd-bench";
const pg = await startPostgresServer({
  port,
  user: "postgres",
  password,
  settings: {
    fsync: "off",
    synchronous_commit: "off",
    full_page_writes: "off",
    shared_preload_libraries: "pg_stat_statements",
    "pg_stat_statements.track": "all",
  },
});
const base = `postgres://postgres:${password}@127.0.0.1:${port}`;
const admin = new SQL(`${base}/postgres`, { max: 1 });
await admin.unsafe("CREATE DATABASE bench");
const db = `${base}/bench`;
const stats = new SQL(db, { max: 1 });
await stats.unsafe("CREATE EXTENSION pg_stat_statements");
const sinkProc = await startSink();
const sink = new SinkClient(sinkProc.url);
const svcd = await startSvcd({ db });
try {
  await stats.unsafe("SELECT pg_stat_statements_reset()");
  console.log(await endToEndRun(svcd, sink, messages));
  const mine = "dbid = (SELECT oid FROM pg_database WHERE datname = 'bench')";
  const rows = await stats.unsafe(`
    SELECT calls, rows, total_exec_time AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
    FROM pg_stat_statements WHERE ${mine} ORDER BY total_exec_time DESC LIMIT 25`);
  // Every statement's time, not only the 25 listed.
  const [{ total }] = await stats.unsafe(`SELECT sum(total_exec_time) AS total FROM pg_stat_statements WHERE ${mine}`);
  const perMessage = (ms: number) => ((ms * 1000) / messages).toFixed(1);
  console.log(`statements' execution time: ${Math.round(total)} ms, ${perMessage(total)} µs per message`);
  for (const r of rows) {
    const counts = `${String(r.calls).padStart(7)} calls ${String(r.rows).padStart(7)} rows`;
    const share = (r.ms / total).toFixed(2);
    console.log(`${perMessage(r.ms).padStart(6)} µs/msg ${share} of all ${counts}  ${r.query}`);
  }
} finally {
  await svcd.stop();
  await sinkProc.stop();
  await stats.close();
  await admin.close();
  await pg.stop();
}
