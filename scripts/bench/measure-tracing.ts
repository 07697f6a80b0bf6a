/**
 * (10) What tracing costs: the end-to-end run (row 2b's, smaller) with tracing off and on, in
 * alternating rounds of one run, svcd exporting every span to a local OTLP/HTTP collector (a sink
 * process of its own, which answers 200). Throughput and CPU µs per message of all of svcd's
 * threads, medians of the rounds; the ratios are on / off.
 *
 *   bun scripts/bench/measure-tracing.ts [--rounds 3] [--messages 20000]
 */
import { parseArgs } from "node:util";
import { endToEndRun } from "./measure-end-to-end.ts";
import { removeDir, SinkClient, startSink, startSvcd } from "./procs.ts";
import { median } from "./stats.ts";
import { threadDelta, threadTimes } from "./threads.ts";

export interface TracingCost {
  messages: number;
  rounds: number;
  off: { perSecond: number; cpuUs: number };
  on: { perSecond: number; cpuUs: number };
  /** Export requests the collector received during the traced rounds. */
  exports: number;
}

export async function measureTracing(sink: SinkClient, messages: number, rounds = 3): Promise<TracingCost> {
  const collectorProc = await startSink();
  const collector = new SinkClient(collectorProc.url);
  const runs: Record<"off" | "on", Array<{ perSecond: number; cpuUs: number }>> = { off: [], on: [] };
  let exports = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const order: Array<"off" | "on"> = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
      for (const side of order) {
        const env: Record<string, string> = side === "on" ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "200" } : {};
        const svcd = await startSvcd({ env });
        try {
          await collector.reset();
          const before = threadTimes(svcd.pid);
          const run = await endToEndRun(svcd, sink, messages);
          let ms = 0;
          for (const t of threadDelta(before, threadTimes(svcd.pid))) ms += t.ms;
          runs[side].push({ perSecond: run.perSecond, cpuUs: (ms * 1000) / run.delivered });
          if (side === "on") exports += (await collector.stats()).count;
          process.stderr.write(`tracing ${side}, round ${round + 1}: ${Math.round(run.perSecond)}/s, ${((ms * 1000) / run.delivered).toFixed(0)} µs CPU per message\n`);
        } finally {
          await svcd.stop();
          removeDir(svcd.dir);
        }
      }
    }
  } finally {
    await collectorProc.stop();
  }
  const summary = (list: Array<{ perSecond: number; cpuUs: number }>) => ({
    perSecond: median(list.map((r) => r.perSecond)),
    cpuUs: median(list.map((r) => r.cpuUs)),
  });
  return { messages, rounds, off: summary(runs.off), on: summary(runs.on), exports };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" }, messages: { type: "string", default: "20000" } } });
  const sinkProc = await startSink();
  try {
    const r = await measureTracing(new SinkClient(sinkProc.url), Number(values.messages), Number(values.rounds));
    console.log(JSON.stringify(r, null, 2));
    console.log(`on / off: throughput ${(r.on.perSecond / r.off.perSecond).toFixed(2)}, CPU per message ${(r.on.cpuUs / r.off.cpuUs).toFixed(2)}`);
  } finally {
    await sinkProc.stop();
  }
  process.exit(0);
}
