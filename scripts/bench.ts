/**
 * `npm run bench`: measures svcd against the limits of this machine, every figure as a ratio to a
 * baseline taken in the same run (these machines are noisy: never compare absolute numbers
 * across runs). Starts everything it needs on loopback, prints the table, writes BENCHMARKS.md
 * and exits by itself within the deadline (BENCH_DEADLINE_SECONDS, default 720).
 *
 *   bun scripts/bench.ts            full run (about 6 minutes on 2 cores)
 *   BENCH_QUICK=1 bun scripts/bench.ts   smoke run with small sizes
 *
 * Processes: svcd under test (`bun src/main.ts --port 0 --db <tmp> --log-level warn`), the
 * delivery sink and the bare baseline server each run on their own; the load generator
 * (scripts/bench/load.ts) runs here and drives both sides of every comparison. The PostgreSQL
 * comparison (rows 9a–9h, scripts/bench/measure-postgres.ts) starts the embedded PostgreSQL of the
 * tests, and runs pg-boss and graphile-worker on the Node 22 of the `node` package, all three
 * installed on first use into .bench-peers/ (scripts/bench/peers.ts); rows 9e–9h run through a
 * delay proxy in front of it (scripts/bench/measure-remote.ts).
 */
import { mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fillBacklogInProcess } from "./bench/backlog-fill.ts";
import { BENCH } from "./bench/config.ts";
import { deliveryRun, measureDelivery } from "./bench/measure-delivery.ts";
import { measureDelay } from "./bench/measure-delay.ts";
import { measureTracing } from "./bench/measure-tracing.ts";
import { endToEndRun } from "./bench/measure-end-to-end.ts";
import { measureFanout } from "./bench/measure-fanout.ts";
import { measureLatency } from "./bench/measure-latency.ts";
import { measurePostgres } from "./bench/measure-postgres.ts";
import { bareLoad, DELAYED, publishLoad } from "./bench/measure-publish.ts";
import { measureStart } from "./bench/measure-start.ts";
import { measureStatistics } from "./bench/measure-statistics.ts";
import { removeDir, SinkClient, startBare, startFloor, startSink, startSvcd, type Helper, type Publishable, type Svcd } from "./bench/procs.ts";
import { GENERATOR } from "./bench/load.ts";
import { machine, markdownTable, rows, terminalTable, threadsSection, type Results } from "./bench/report.ts";
import { postgresSection } from "./bench/report-postgres.ts";
import { threadDelta, threadTimes } from "./bench/threads.ts";
import { stopTestPostgres } from "../test/helpers/postgres.ts";

const COMMAND = BENCH.quick ? "BENCH_QUICK=1 npm run bench" : "npm run bench";
const OUT = new URL("../BENCHMARKS.md", import.meta.url).pathname;
const ANALYSIS = new URL("./bench/analysis.md", import.meta.url).pathname;

const results: Results = { errors: [], threads: {} };
const live: Array<{ stop(): Promise<void> }> = [];
const dirs: string[] = [];
const began = performance.now();
const loadAtStart = loadavg().map((n) => n.toFixed(2)).join(", ");

const log = (text: string) => process.stderr.write(`[bench ${((performance.now() - began) / 1000).toFixed(0).padStart(3)}s] ${text}\n`);

/** Runs one measurement; a failure is recorded and the run goes on with the next one. */
async function step<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
  log(name);
  try {
    return await fn();
  } catch (error) {
    const text = `${name}: ${(error as Error)?.stack ?? error}`;
    results.errors.push(text);
    log(`FAILED ${text}`);
    return undefined;
  }
}

async function spawnSvcd(dir?: string): Promise<Svcd> {
  const svcd = await startSvcd({ dir });
  live.push(svcd);
  dirs.push(svcd.dir);
  return svcd;
}

async function stopSvcd(svcd: Svcd): Promise<number> {
  const { peakMb } = await svcd.memory();
  await svcd.stop();
  live.splice(live.indexOf(svcd), 1);
  return peakMb;
}

/** CPU per thread of `svcd` while `fn` runs, normalised per 1,000 messages. */
async function withThreads<T>(svcd: { pid: number }, phase: string, fn: () => Promise<T>, messages: (r: T) => number): Promise<T> {
  const before = threadTimes(svcd.pid);
  const r = await fn();
  const n = messages(r);
  if (n > 0) results.threads![phase] = threadDelta(before, threadTimes(svcd.pid)).map((t) => ({ name: t.name, ms: (t.ms * 1000) / n }));
  return r;
}

const START = "<!-- npm run bench: start (written by scripts/bench.ts) -->";
const END = "<!-- npm run bench: end -->";

/** Replaces this script's section of BENCHMARKS.md; other sections (the soak run) stay as they are. */
function mergeSection(file: string, section: string): string {
  const a = file.indexOf(START);
  const b = file.indexOf(END);
  if (a >= 0 && b > a) return file.slice(0, a) + section + file.slice(b + END.length);
  // First time: right after the title, before the other sections.
  const firstSection = file.indexOf("\n## ");
  if (firstSection < 0) return `${file.trimEnd()}\n\n${section}\n`;
  return `${file.slice(0, firstSection).trimEnd()}\n\n${section}\n${file.slice(firstSection)}`;
}

async function writeReport(complete: boolean) {
  const list = rows(results);
  const table = markdownTable(list);
  process.stdout.write(`\n${terminalTable(list)}\n\nmachine: ${machine()}\n`);
  if (results.errors.length) process.stdout.write(`\nerrors:\n${results.errors.join("\n")}\n`);
  const analysis = (await Bun.file(ANALYSIS).exists()) ? await Bun.file(ANALYSIS).text() : "";
  const section = [
    START,
    "## npm run bench",
    "",
    `Latest run: ${new Date().toISOString()} on ${machine()}.`,
    `Command: \`${COMMAND}\` (= \`bun scripts/bench.ts\`), ${((performance.now() - began) / 1000).toFixed(0)} s${complete ? "" : ", **stopped at the deadline: incomplete**"}.`,
    "Every ratio compares svcd with a baseline measured in the same run with the same load generator",
    `(scripts/bench/load.ts; this run: ${GENERATOR}; 1 KB JSON body); absolute numbers move with`,
    `the machine's load, the ratios much less. Load average when the run began: ${loadAtStart}. Sizes: ` +
      `${BENCH.deliveryMessages.toLocaleString("en-US")} messages delivered, ` +
      `${BENCH.backlogMessages.toLocaleString("en-US")} stored for the backlog, ${BENCH.publishSeconds} s per publish side.`,
    "",
    table,
    "",
    threadsSection(results.threads),
    "",
    postgresSection(results.postgres),
    results.errors.length ? `\nErrors in this run:\n\n\`\`\`\n${results.errors.join("\n")}\n\`\`\`` : "",
    "",
    analysis.trim(),
    END,
  ].join("\n");
  const md = mergeSection((await Bun.file(OUT).exists()) ? await Bun.file(OUT).text() : "# Benchmarks\n", section);
  await Bun.write(OUT, md);
  process.stdout.write(`\nwrote ${OUT}\n`);
}

async function cleanUp() {
  await stopTestPostgres().catch(() => {});
  for (const p of [...live].reverse()) await p.stop().catch(() => {});
  for (const dir of dirs) removeDir(dir);
}

// The run must end by itself: at the deadline whatever finished is reported.
const deadline = setTimeout(async () => {
  log(`deadline of ${BENCH.deadlineSeconds} s reached: reporting what finished`);
  await writeReport(false);
  await cleanUp();
  process.exit(1);
}, BENCH.deadlineSeconds * 1000);

const sinkProc: Helper = await startSink();
live.push(sinkProc);
const sink = new SinkClient(sinkProc.url);
const bare = await startBare();
live.push(bare);

// (1) Publish throughput: bare Bun.serve, then svcd on a fresh store (delayed messages).
const bareResult = await step("publish: bare Bun.serve", () =>
  withThreads(bare, "bare Bun.serve (the baseline of rows 1 and 1b), per request", () => bareLoad(bare), (r) => r.total),
);
let peakA = NaN;
await step("publish: svcd, delayed messages", async () => {
  const svcd = await spawnSvcd();
  try {
    const delayed = await withThreads(svcd, "publish (delayed)", () => publishLoad(svcd, `${sink.url}/publish`, DELAYED), (r) => r.total);
    results.publish = { bare: bareResult!, delayed, delayedRatio: delayed.rps / bareResult!.rps, svcd: delayed, ratio: NaN };
  } finally {
    peakA = await stopSvcd(svcd);
  }
});

// Rows 1b, 2, 3, 8, 5 on a second fresh svcd.
const svcd = await spawnSvcd();
await step("publish: svcd, delivered at once", async () => {
  await sink.reset();
  // CPU per message over the publishing and until the last of those messages arrived.
  const delivering = await withThreads(
    svcd,
    "publish while delivering (publish + delivery)",
    async () => {
      const load = await publishLoad(svcd, `${sink.url}/publish`);
      await sink.waitForCount(load.total, 120_000);
      return { load, arrived: (await sink.waitUntilQuiet(500, 120_000)).count };
    },
    (r) => r.arrived,
  );
  if (results.publish) Object.assign(results.publish, { svcd: delivering.load, ratio: delivering.load.rps / results.publish.bare.rps });
});
await step("delivery throughput", async () => {
  let before = threadTimes(svcd.pid);
  results.delivery = await measureDelivery(svcd, sink, results.publish?.delayed.rps ?? 2000, BENCH.deliveryMessages, () => {
    before = threadTimes(svcd.pid);
  });
  const n = results.delivery.svcd.delivered;
  results.threads!["delivery (row 2, after the publishing)"] = threadDelta(before, threadTimes(svcd.pid)).map((t) => ({ name: t.name, ms: (t.ms * 1000) / n }));
});
await step("end to end, publishing and delivering at once", async () => {
  const run = await withThreads(svcd, "end to end (publish + delivery at once)", () => endToEndRun(svcd, sink), (r) => r.delivered);
  const baseline = results.delivery?.baseline.rps ?? NaN;
  results.endToEnd = { run, baseline, ratio: run.perSecond / baseline };
});
await step("latency", async () => void (results.latency = await measureLatency(svcd, sink)));
await step("delay accuracy", async () => void (results.delay = await measureDelay(svcd, sink)));
await step("fan-out", async () => void (results.fanout = await measureFanout(svcd, sink)));
const peakB = await stopSvcd(svcd);
results.emptyPeakRssMb = Math.max(peakA, peakB);

/** Runs `measure` against a durable floor of its own (`tight`: the integer-keyed one), stopped after. */
async function onFloor(tight: boolean, measure: (floor: Helper & Publishable) => Promise<void>): Promise<void> {
  const floor = await startFloor(undefined, tight);
  live.push(floor);
  try {
    await measure(floor);
  } finally {
    await floor.stop();
    live.splice(live.indexOf(floor), 1);
  }
}

// (1f, 2f) The durable floor on the same loads: how far svcd is from the least a durable relay pays.
await step("the durable floor: publish, then end to end", () =>
  onFloor(false, async (floor) => {
    results.floor = {};
    const publish = () => publishLoad(floor, `${sink.url}/publish`, DELAYED);
    results.floor.publish = await withThreads(floor, "durable floor: publish (delayed)", publish, (r) => r.total);
    await sink.reset();
    const endToEnd = () => endToEndRun(floor, sink);
    results.floor.endToEnd = await withThreads(floor, "durable floor: end to end", endToEnd, (r) => r.delivered);
  }),
);

// (1t, 1bt, 2t) The tight floor (integer row keys, no timestamp): the targets of the hot path.
await step("the tight durable floor: publish, publish while delivering, end to end", () =>
  onFloor(true, async (floor) => {
    const tight: NonNullable<Results["tightFloor"]> = (results.tightFloor = {});
    tight.publish = await withThreads(floor, "tight floor: publish (delayed)", () => publishLoad(floor, `${sink.url}/publish`, DELAYED), (r) => r.total);
    await sink.reset();
    tight.delivering = await publishLoad(floor, `${sink.url}/publish`);
    await sink.waitForCount(tight.delivering.total, 120_000);
    await sink.reset();
    tight.endToEnd = await withThreads(floor, "tight floor: end to end", () => endToEndRun(floor, sink), (r) => r.delivered);
  }),
);

// (4) Backlog: a store filled directly with delayed messages, then rows 1 and 2 again.
await step(`backlog: fill ${BENCH.backlogMessages.toLocaleString("en-US")} delayed messages`, async () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-bench-backlog-"));
  dirs.push(dir);
  const fill = await fillBacklogInProcess(join(dir, "svcd.sqlite"), BENCH.backlogMessages, `${sink.url}/backlog`);
  log(`filled in ${fill.seconds.toFixed(1)} s, ${Math.round(fill.bytesPerMessage)} bytes per message`);
  const full = await spawnSvcd(dir);
  try {
    const publish = await publishLoad(full, `${sink.url}/publish`, DELAYED);
    const delivery = await deliveryRun(full, sink, BENCH.deliveryMessages, publish.rps);
    const peakRssMb = (await full.memory()).peakMb;
    results.backlog = {
      fill,
      publish,
      delivery,
      publishRatio: publish.rps / (results.publish?.delayed.rps ?? NaN),
      deliveryRatio: delivery.perSecond / (results.delivery?.svcd.perSecond ?? NaN),
      peakRssMb,
    };
  } finally {
    await stopSvcd(full);
  }
});

await step("tracing on / off", async () => void (results.tracing = await measureTracing(sink, BENCH.tracingMessages)));
await step("statistics", async () => void (results.statistics = await measureStatistics()));
await step("start of the compiled binary", async () => void (results.start = await measureStart()));
await step("PostgreSQL: svcd on 1–3 nodes and on SQLite, pg-boss, graphile-worker; PostgreSQL 2 ms away", async () => {
  results.postgres = await measurePostgres({ messages: BENCH.postgresMessages, connections: BENCH.connections, sink, log });
  await stopTestPostgres();
});

clearTimeout(deadline);
await writeReport(true);
await cleanUp();
log("done");
process.exit(0);
