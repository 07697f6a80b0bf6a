/**
 * Where a publish's CPU goes on the serving thread, kernel against user space, for the bare
 * Bun.serve, the durable floor and svcd under row 1's load (delayed messages, 64 connections):
 * Linux `perf` samples that one thread while the load runs, and its report splits the samples by
 * system call (each with the loopback delivery to the generator that runs inside it) and by
 * binary (Bun's own code, JIT-compiled JavaScript, libc). Rounds alternate the three; medians.
 * `--e2e`: the floor and svcd end to end instead (row 2b's load), every thread of the process,
 * per message delivered. Needs `perf` (Debian: linux-perf) and the right to use it (root, or
 * perf_event_paranoid ≤ 1).
 *
 *   bun scripts/bench/kernel-split.ts [--rounds 3] [--seconds 6] [--e2e] [--root <checkout>]
 */
import { parseArgs } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH } from "./config.ts";
import { endToEndRun } from "./measure-end-to-end.ts";
import { bareLoad, DELAYED, publishLoad } from "./measure-publish.ts";
import { removeDir, SinkClient, startBare, startFloor, startSink, startSvcd } from "./procs.ts";
import { median } from "./stats.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "6" },
    root: { type: "string" },
    e2e: { type: "boolean", default: false },
  },
});
const HZ = 2000;
const SYSCALLS = ["sendto", "pwrite64", "recvfrom", "getpeername", "fsync", "pread64"] as const;
const BINARIES = { bun: "bun.exe", jit: "[JIT]", libc: "libc.so.6" } as const;

if (Bun.spawnSync(["perf", "--version"], { stderr: "ignore", stdout: "ignore" }).exitCode !== 0) {
  console.error("kernel-split: needs Linux perf (apt-get install linux-perf)");
  process.exit(2);
}
BENCH.publishSeconds = Number(values.seconds);
// End to end, the recording starts once the publishing runs and ends well before the last
// arrival: 100,000 messages last 4–9 s here.
const recordSeconds = values.e2e ? 2 : Math.max(1, BENCH.publishSeconds - 2);
const lead = values.e2e ? 0.7 : 1.5;
const E2E_MESSAGES = 100_000;
const dir = mkdtempSync(join(tmpdir(), "svcd-perf-"));

/**
 * µs per request (or message) of what perf recorded, split by system call and binary; with
 * `byThread`, also each thread's total and kernel share (keys `<thread>` and `<thread> kernel`).
 */
function report(file: string, requests: number, byThread: boolean): Record<string, number> {
  const run = (args: string) =>
    Bun.spawnSync(["bash", "-c", `perf report -i ${file} ${args} -g none 2>/dev/null`]).stdout.toString();
  const byBinary = run("--no-children --sort dso");
  // cpu-clock's event count is the recorded CPU time in ns.
  const cpuNs = Number(/Event count \(approx\.\): (\d+)/.exec(byBinary)?.[1] ?? 0);
  const total = requests > 0 ? cpuNs / 1000 / requests : 0;
  const us = (percent: string) => (Number(percent) / 100) * total;
  const sumOf = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].reduce((sum, m) => sum + us(m[1]!), 0);
  const bySyscall = run("--children --sort sym");
  const out: Record<string, number> = { total, kernel: sumOf(byBinary, /([\d.]+)%\s+\[kernel\.kallsyms\]/g) };
  for (const s of SYSCALLS)
    out[s] = sumOf(bySyscall, new RegExp(`([\\d.]+)%\\s+[\\d.]+%\\s+\\[k\\] __x64_sys_${s}\\s*$`, "gm"));
  for (const [name, dso] of Object.entries(BINARIES))
    out[name] = sumOf(byBinary, new RegExp(`([\\d.]+)%\\s+${dso.replace(/[[\].]/g, "\\$&")}`, "g"));
  if (!byThread) return out;
  for (const m of run("--no-children --sort comm,dso").matchAll(/([\d.]+)%\s+(\S.*?)\s{2,}(\S.*?)\s*$/gm)) {
    const thread = m[2]!;
    out[thread] = (out[thread] ?? 0) + us(m[1]!);
    if (m[3]!.startsWith("[kernel")) out[`${thread} kernel`] = (out[`${thread} kernel`] ?? 0) + us(m[1]!);
  }
  return out;
}

/** Records `pid` (its serving thread, or with --e2e all its threads) while `load` runs. */
async function measure(side: string, pid: number, load: () => Promise<{ rate: number }>) {
  const file = join(dir, `${side}.data`);
  const target = values.e2e ? `-p ${pid}` : `-t ${pid}`;
  const record = `sleep ${lead}; perf record -F ${HZ} -g ${target} -o ${file} -- sleep ${recordSeconds}`;
  const perf = Bun.spawn(["bash", "-c", record], { stdout: "ignore", stderr: "ignore" });
  const { rate } = await load();
  await perf.exited;
  const split = report(file, rate * recordSeconds, values.e2e!);
  results.set(side, [...(results.get(side) ?? []), { rate, ...split }]);
  console.log(`${side.padEnd(6)} ${Math.round(rate).toString().padStart(7)}/s  ${line(split)}`);
}

function line(r: Record<string, number>): string {
  const parts = Object.entries(r).filter(([k, v]) => k !== "rate" && (v >= 0.05 || k === "kernel"));
  return parts.map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ");
}

const results = new Map<string, Array<Record<string, number>>>();
const sink = await startSink();
const sinkClient = new SinkClient(sink.url);
const bare = await startBare();
const floor = await startFloor();
const svcd = await startSvcd({ root: values.root });
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    if (values.e2e) {
      console.log(`round ${round} (µs per message, all threads)`);
      for (const [side, server] of [["floor", floor], ["svcd", svcd]] as const) {
        const endToEnd = async () => ({ rate: (await endToEndRun(server, sinkClient, E2E_MESSAGES)).perSecond });
        await measure(side, server.pid, endToEnd);
      }
      continue;
    }
    console.log(`round ${round} (µs per request on the serving thread)`);
    await measure("bare", bare.pid, async () => ({ rate: (await bareLoad(bare)).rps }));
    await measure("floor", floor.pid, async () => ({ rate: (await publishLoad(floor, `${sink.url}/p`, DELAYED)).rps }));
    await measure("svcd", svcd.pid, async () => ({ rate: (await publishLoad(svcd, `${sink.url}/p`, DELAYED)).rps }));
  }
} finally {
  await Promise.all([bare.stop(), floor.stop(), svcd.stop(), sink.stop()]);
  removeDir(svcd.dir);
  removeDir(dir);
}
console.log("medians:");
for (const [side, rows] of results) {
  const keys = Object.keys(rows[0]!);
  const med = Object.fromEntries(keys.map((k) => [k, median(rows.map((r) => r[k] ?? 0))]));
  console.log(`${side.padEnd(6)} ${Math.round(med.rate!).toString().padStart(7)}/s  ${line(med)}`);
}
