/**
 * A/B in one run: two checkouts of svcd measured alternately on the same machine, so that the
 * machine's load falls on both alike. For each phase: throughput and CPU µs per message of each of
 * svcd's threads (main, delivery workers, Bun's HTTP client thread, the rest), medians of the rounds.
 *
 *   bun scripts/bench-ab.ts --a <checkout A> [--b <checkout B, default this one>]
 *       [--rounds 3] [--phases publish,delivering,delivery,e2e] [--messages 20000] [--seconds 5]
 *       [--a-args="--workers 1"] [--b-args="..."] [--engine postgres]
 *
 * A checkout is a directory with `src/main.ts` (e.g. `git worktree add /tmp/svcd-main main`).
 * Phases: publish (delayed 1 h: the publish path alone), delivering (published due at once:
 * publish and delivery on the same cores), delivery (N published, then delivered from a full
 * table), e2e (N published and delivered at the same time). `--engine postgres`: each start gets a
 * fresh database on the tests' embedded PostgreSQL (fsync off) instead of a SQLite file.
 */
import { parseArgs } from "node:util";
import { BENCH } from "./bench/config.ts";
import { endToEndRun } from "./bench/measure-end-to-end.ts";
import { deliveryRun } from "./bench/measure-delivery.ts";
import { GENERATOR } from "./bench/load.ts";
import { DELAYED, publishLoad } from "./bench/measure-publish.ts";
import { removeDir, SinkClient, startSink, startSvcd, type Svcd } from "./bench/procs.ts";
import { median } from "./bench/stats.ts";
import { threadDelta, threadTimes } from "./bench/threads.ts";
import { freshDatabase, stopTestPostgres } from "../test/helpers/postgres.ts";

const { values } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string" },
    rounds: { type: "string", default: "3" },
    phases: { type: "string", default: "publish,delivering,delivery,e2e" },
    messages: { type: "string", default: "20000" },
    seconds: { type: "string" },
    "a-args": { type: "string", default: "" },
    "b-args": { type: "string", default: "" },
    engine: { type: "string", default: "sqlite" },
  },
});
if (!values.a) {
  console.error("usage: bun scripts/bench-ab.ts --a <checkout> [--b <checkout>] [--rounds N] [--phases ...]");
  process.exit(2);
}
if (values.seconds) BENCH.publishSeconds = Number(values.seconds);
const ROOT = new URL("../", import.meta.url).pathname;
const sides = [
  { name: "A", root: values.a, args: values["a-args"].split(" ").filter(Boolean) },
  { name: "B", root: values.b ?? ROOT, args: values["b-args"].split(" ").filter(Boolean) },
];
const phases = values.phases.split(",");
const messages = Number(values.messages);
const rounds = Number(values.rounds);

type Sample = { rate: number; cpu: Record<string, number> };
const samples = new Map<string, Sample[]>();

const group = (name: string) =>
  name.endsWith("(main)") ? "main" : name.startsWith("Worker") ? "workers" : name.startsWith("HTTP Client") ? "http client" : "other";

async function measured<T>(svcd: Svcd, fn: () => Promise<T>, count: (r: T) => number, rate: (r: T) => number): Promise<Sample> {
  const before = threadTimes(svcd.pid);
  const r = await fn();
  const n = count(r);
  const cpu: Record<string, number> = { main: 0, workers: 0, "http client": 0, other: 0, all: 0 };
  for (const t of threadDelta(before, threadTimes(svcd.pid))) {
    cpu[group(t.name)]! += (t.ms * 1000) / n;
    cpu.all! += (t.ms * 1000) / n;
  }
  return { rate: rate(r), cpu };
}

const sinkProc = await startSink();
const sink = new SinkClient(sinkProc.url);
console.error(`generator: ${GENERATOR}; ${rounds} rounds; phases ${phases.join(", ")}`);
try {
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const db = values.engine === "postgres" ? await freshDatabase() : undefined;
      const svcd = await startSvcd({ root: side.root, extraArgs: side.args, db });
      try {
        for (const phase of phases) {
          let s: Sample;
          if (phase === "publish")
            s = await measured(svcd, () => publishLoad(svcd, `${sink.url}/ab`, DELAYED), (r) => r.total, (r) => r.rps);
          else if (phase === "delivering") {
            await sink.reset();
            s = await measured(
              svcd,
              async () => {
                const load = await publishLoad(svcd, `${sink.url}/ab`);
                await sink.waitForCount(load.total, 120_000);
                return { load, arrived: (await sink.waitUntilQuiet(500, 120_000)).count };
              },
              (r) => r.arrived,
              (r) => r.load.rps,
            );
          } else if (phase === "delivery") {
            const before = threadTimes(svcd.pid);
            let mark = before;
            // The messages fall due after a wait sized for 3,000 publishes/s (fetch loops, not wrk):
            // a loaded machine or PostgreSQL publishing slower still starts from a full table.
            const run = await deliveryRun(svcd, sink, messages, 3000, () => (mark = threadTimes(svcd.pid)));
            const cpu: Record<string, number> = { main: 0, workers: 0, "http client": 0, other: 0, all: 0 };
            for (const t of threadDelta(mark, threadTimes(svcd.pid))) {
              cpu[group(t.name)]! += (t.ms * 1000) / run.delivered;
              cpu.all! += (t.ms * 1000) / run.delivered;
            }
            s = { rate: run.perSecond, cpu };
          } else if (phase === "e2e") s = await measured(svcd, () => endToEndRun(svcd, sink, messages), (r) => r.delivered, (r) => r.perSecond);
          else throw new Error(`unknown phase ${phase}`);
          const key = `${phase}|${side.name}`;
          samples.set(key, [...(samples.get(key) ?? []), s]);
          console.error(`round ${round + 1} ${side.name} ${phase}: ${Math.round(s.rate)}/s, µs/msg ${Object.entries(s.cpu).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(" ")}`);
        }
      } finally {
        await svcd.stop();
        removeDir(svcd.dir);
      }
    }
  }
} finally {
  await sinkProc.stop();
  if (values.engine === "postgres") await stopTestPostgres();
}

console.log(`\nA = ${sides[0]!.root} ${sides[0]!.args.join(" ")}\nB = ${sides[1]!.root} ${sides[1]!.args.join(" ")}\ngenerator: ${GENERATOR}\n`);
console.log("| phase | side | per s | CPU µs/msg: main | workers | http client | other | all |\n|---|---|---|---|---|---|---|---|");
for (const phase of phases)
  for (const side of sides) {
    const list = samples.get(`${phase}|${side.name}`) ?? [];
    const m = (f: (s: Sample) => number) => median(list.map(f));
    // The main thread to a tenth: a cut of one statement per message moves it by less than 1 µs.
    const cols = ["main", "workers", "http client", "other", "all"].map((k) => m((s) => s.cpu[k]!).toFixed(k === "main" ? 1 : 0));
    console.log(`| ${phase} | ${side.name} | ${Math.round(m((s) => s.rate))} | ${cols.join(" | ")} |`);
  }
process.exit(0);
