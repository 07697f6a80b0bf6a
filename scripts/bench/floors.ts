/**
 * How far svcd is from the least a durable publish costs on this machine, A/B in one run: rounds
 * alternate a bare Bun.serve (stores nothing), the durable floor (durable-floor.ts: one thread, one
 * INSERT per publish), its tight form (integer row keys, `--tight`), the floor with its HTTP on threads (floor-threads/: `--fronts` threads
 * behind one port, the writer alone on its thread) and svcd, each under the same publish load
 * (row 1's: delayed messages, 64 connections), then the floor and svcd end to end (row 2b's).
 * Prints each side's rate and CPU µs per message per thread, and the medians of the rounds.
 *
 *   bun scripts/bench/floors.ts [--rounds 3] [--seconds 5] [--fronts 2] [--messages 20000]
 */
import { parseArgs } from "node:util";
import { BENCH } from "./config.ts";
import { endToEndRun } from "./measure-end-to-end.ts";
import { bareLoad, DELAYED, publishLoad } from "./measure-publish.ts";
import { removeDir, SinkClient, startBare, startFloor, startSink, startSvcd } from "./procs.ts";
import { median } from "./stats.ts";
import { threadDelta, threadTimes } from "./threads.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "5" },
    fronts: { type: "string", default: "2" },
    messages: { type: "string", default: "20000" },
  },
});
BENCH.publishSeconds = Number(values.seconds);
const messages = Number(values.messages);

const sinkProc = await startSink();
const sink = new SinkClient(sinkProc.url);
const bare = await startBare();
const floor = await startFloor();
const threaded = await startFloor(Number(values.fronts));
const tight = await startFloor(undefined, true);
const svcd = await startSvcd({});
const destination = `${sink.url}/publish`;

interface Sample {
  rate: number;
  cpu: number;
  threads: string;
}
const samples = new Map<string, Sample[]>();

/** Runs `load` against the process `pid`: its rate and its CPU per message, per thread. */
async function measure(side: string, pid: number, load: () => Promise<{ rate: number; count: number }>) {
  const before = threadTimes(pid);
  const { rate, count } = await load();
  const used = threadDelta(before, threadTimes(pid)).map((t) => ({ name: t.name, us: (t.ms * 1000) / count }));
  const cpu = used.reduce((sum, t) => sum + t.us, 0);
  const threads = used.slice(0, 4).map((t) => `${t.name} ${t.us.toFixed(1)}`).join(", ");
  samples.set(side, [...(samples.get(side) ?? []), { rate, cpu, threads }]);
  console.log(`${side.padEnd(26)} ${Math.round(rate).toString().padStart(7)}/s  CPU µs per message ${cpu.toFixed(1)} (${threads})`);
}

const publish = (r: { rps: number; total: number }) => ({ rate: r.rps, count: r.total });
const endToEnd = (r: { perSecond: number; delivered: number }) => ({ rate: r.perSecond, count: r.delivered });
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    console.log(`round ${round}`);
    await measure("publish: bare Bun.serve", bare.pid, async () => publish(await bareLoad(bare)));
    await measure("publish: floor", floor.pid, async () => publish(await publishLoad(floor, destination, DELAYED)));
    await measure("publish: tight floor", tight.pid, async () => publish(await publishLoad(tight, destination, DELAYED)));
    await measure(`publish: floor, ${values.fronts} fronts`, threaded.pid, async () =>
      publish(await publishLoad(threaded, destination, DELAYED)),
    );
    await measure("publish: svcd", svcd.pid, async () => publish(await publishLoad(svcd, destination, DELAYED)));
    await measure("end to end: floor", floor.pid, async () => endToEnd(await endToEndRun(floor, sink, messages)));
    await measure("end to end: tight floor", tight.pid, async () => endToEnd(await endToEndRun(tight, sink, messages)));
    await measure("end to end: svcd", svcd.pid, async () => endToEnd(await endToEndRun(svcd, sink, messages)));
  }
} finally {
  await svcd.stop();
  removeDir(svcd.dir);
  for (const p of [tight, threaded, floor, bare, sinkProc]) await p.stop();
}

const bareRate = median(samples.get("publish: bare Bun.serve")!.map((s) => s.rate));
console.log("\nmedians (ratio: publish to the bare server's rate, end to end to the floor's)");
const floorE2e = median(samples.get("end to end: floor")!.map((s) => s.rate));
for (const [side, list] of samples) {
  const rate = median(list.map((s) => s.rate));
  const ratio = side.startsWith("publish") ? rate / bareRate : rate / floorE2e;
  console.log(`${side.padEnd(26)} ${Math.round(rate).toString().padStart(7)}/s  ${ratio.toFixed(2)}  CPU µs ${median(list.map((s) => s.cpu)).toFixed(1)}`);
}
process.exit(0);
