/**
 * The PostgreSQL comparison of `npm run bench` (rows 9a–9h), alone: svcd on PostgreSQL with 1, 2
 * and 3 nodes against svcd on SQLite, pg-boss and graphile-worker (with their defaults, and tuned)
 * on the same embedded PostgreSQL, end to end, then PostgreSQL 2 ms away behind a delay proxy
 * (scripts/bench/measure-postgres.ts and measure-remote.ts say how). Prints the rows and the table. The first
 * run installs pg-boss, graphile-worker and their Node 22 into .bench-peers/ (scripts/bench/peers.ts).
 *
 *   bun scripts/bench-postgres.ts [--messages 20000] [--connections 64] [--json]
 *
 * --json prints the raw results as one JSON line at the end.
 */
import { parseArgs } from "node:util";
import { measurePostgres } from "./bench/measure-postgres.ts";
import { SinkClient, startSink } from "./bench/procs.ts";
import { terminalTable } from "./bench/report.ts";
import { postgresRows, postgresSection } from "./bench/report-postgres.ts";
import { stopTestPostgres } from "../test/helpers/postgres.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "20000" },
    connections: { type: "string", default: "64" },
    json: { type: "boolean", default: false },
  },
});
const began = performance.now();
const log = (text: string) => {
  const seconds = ((performance.now() - began) / 1000).toFixed(0).padStart(3);
  process.stderr.write(`[bench-postgres ${seconds}s] ${text}\n`);
};

const sinkProc = await startSink();
try {
  const results = await measurePostgres({
    messages: Number(values.messages),
    connections: Number(values.connections),
    sink: new SinkClient(sinkProc.url),
    log,
  });
  process.stdout.write(`\n${terminalTable(postgresRows(results))}\n\n${postgresSection(results)}\n`);
  if (values.json) process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  await sinkProc.stop();
  await stopTestPostgres();
}
process.exit(0);
