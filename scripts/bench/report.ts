/** The results table (terminal and BENCHMARKS.md) built from whatever measurements finished. */
import { cpus } from "node:os";
import type { FillResult } from "./backlog-fill.ts";
import type { DeliveryRun, DeliveryThroughput } from "./measure-delivery.ts";
import type { DelayAccuracy } from "./measure-delay.ts";
import type { EndToEndRun } from "./measure-end-to-end.ts";
import type { FanoutResult } from "./measure-fanout.ts";
import type { LatencyResult } from "./measure-latency.ts";
import type { PublishThroughput } from "./measure-publish.ts";
import type { LoadResult } from "./load.ts";
import type { PostgresResults } from "./measure-postgres.ts";
import { postgresRows } from "./report-postgres.ts";
import type { StartResult } from "./measure-start.ts";
import type { StatisticsResult } from "./measure-statistics.ts";
import type { TracingCost } from "./measure-tracing.ts";

export interface Results {
  publish?: PublishThroughput & { delayed: LoadResult; delayedRatio: number };
  delivery?: DeliveryThroughput;
  endToEnd?: { run: EndToEndRun; baseline: number; ratio: number };
  /** The durable floor (durable-floor.ts): the least any durable relay in Bun pays, on the same loads. */
  floor?: { publish?: LoadResult; endToEnd?: EndToEndRun };
  /** The tight floor (durable-floor.ts --tight: integer row keys), on rows 1, 1b and 2b's loads. */
  tightFloor?: { publish?: LoadResult; delivering?: LoadResult; endToEnd?: EndToEndRun };
  latency?: LatencyResult;
  backlog?: {
    fill: FillResult;
    publish: LoadResult;
    delivery: DeliveryRun;
    publishRatio: number;
    deliveryRatio: number;
    peakRssMb: number;
  };
  emptyPeakRssMb?: number;
  fanout?: FanoutResult;
  statistics?: StatisticsResult;
  start?: StartResult;
  delay?: DelayAccuracy;
  tracing?: TracingCost;
  postgres?: PostgresResults;
  /** CPU ms per thread of svcd during a phase, per 1,000 messages (= µs per message). */
  threads?: Record<string, Array<{ name: string; ms: number }>>;
  errors: string[];
}

export interface Row {
  id: string;
  measure: string;
  svcd: string;
  baseline: string;
  result: string;
  target: string;
  met: "yes" | "no" | "n/a" | "—";
}

const n0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const n1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—");
const n2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—");
const yes = (ok: boolean) => (ok ? "yes" : "no");
const signed = (n: number) => (Number.isFinite(n) ? `${n >= 0 ? "+" : "−"}${Math.abs(n).toFixed(2)}` : "—");

export function rows(r: Results): Row[] {
  const out: Row[] = [];
  const missing = (id: string, measure: string, why: string) =>
    out.push({ id, measure, svcd: "not measured", baseline: "", result: why, target: "", met: "—" });

  if (r.publish) {
    const p = r.publish;
    out.push({
      id: "1",
      measure: "Publish throughput, req/s (1 KB, 64 conns; messages delayed 1 h, delivery idle)",
      svcd: n0(p.delayed.rps),
      baseline: `${n0(p.bare.rps)} (bare Bun.serve)`,
      result: n2(p.delayedRatio),
      target: "≥ 0.35",
      met: yes(p.delayedRatio >= 0.35),
    });
    out.push({
      id: "1b",
      measure: "Publish throughput, req/s, while svcd also delivers each message to the sink",
      svcd: n0(p.svcd.rps),
      baseline: `${n0(p.bare.rps)} (bare Bun.serve)`,
      result: n2(p.ratio),
      target: "≥ 0.25",
      met: yes(p.ratio >= 0.25),
    });
  } else missing("1", "Publish throughput", "failed");

  if (r.delivery) {
    const d = r.delivery;
    out.push({
      id: "2",
      measure: `Delivery, msgs/s (${n0(d.svcd.messages)} published first, then delivered from a full table)`,
      svcd: n0(d.svcd.perSecond),
      baseline: `${n0(d.baseline.rps)} (plain fetch loop; ${d.baseline.runs} at once)`,
      result: n2(d.ratio),
      target: "(report)",
      met: "n/a",
    });
  } else missing("2", "Delivery throughput", "failed");

  if (r.endToEnd) {
    const e = r.endToEnd;
    out.push({
      id: "2b",
      measure: `End to end, msgs/s: ${n0(e.run.messages)} messages published (64 conns) and delivered at the same time, first publish → last arrival`,
      svcd: n0(e.run.perSecond),
      baseline: `${n0(e.baseline)} (plain fetch loop, row 2)`,
      result: n2(e.ratio),
      target: "≥ 0.35",
      met: yes(e.ratio >= 0.35),
    });
  } else missing("2b", "End to end, publishing and delivering at once", "failed");

  out.push(...floorRows(r), ...tightFloorRows(r));

  if (r.latency) {
    const l = r.latency;
    const d50 = l.svcd.p50 - l.raw.p50;
    const d99 = l.svcd.p99 - l.raw.p99;
    out.push({
      id: "3",
      measure: `Latency publish → arrival at ${n0(l.rate)} msg/s, p50 / p99 ms${l.svcd.lost ? ` (${l.svcd.lost} lost!)` : ""}`,
      svcd: `${n2(l.svcd.p50)} / ${n2(l.svcd.p99)}`,
      baseline: `${n2(l.raw.p50)} / ${n2(l.raw.p99)} (raw round trip)`,
      result: `${signed(d50)} / ${signed(d99)}`,
      target: "p50 +3, p99 +20",
      met: yes(d50 <= 3 && d99 <= 20 && l.svcd.lost === 0),
    });
  } else missing("3", "Latency", "failed");

  if (r.backlog) {
    const b = r.backlog;
    out.push({
      id: "4a",
      measure: `Publish with ${n0(b.fill.messages)} delayed messages stored, req/s`,
      svcd: n0(b.publish.rps),
      baseline: `${n0(r.publish?.delayed.rps ?? NaN)} (empty store, row 1)`,
      result: n2(b.publishRatio),
      target: "≥ 0.8",
      met: yes(b.publishRatio >= 0.8),
    });
    out.push({
      id: "4b",
      measure: `Delivery with ${n0(b.fill.messages)} delayed messages stored, msgs/s`,
      svcd: n0(b.delivery.perSecond),
      baseline: `${n0(r.delivery?.svcd.perSecond ?? NaN)} (empty store, row 2)`,
      result: n2(b.deliveryRatio),
      target: "≥ 0.8",
      met: yes(b.deliveryRatio >= 0.8),
    });
    out.push({
      id: "4c",
      measure: "Peak RSS of svcd with the backlog (VmHWM), MB",
      svcd: n0(b.peakRssMb),
      baseline: `${n0(r.emptyPeakRssMb ?? NaN)} (rows 1–3, 5, 8)`,
      result: n0(b.peakRssMb),
      target: "< 300",
      met: yes(b.peakRssMb < 300),
    });
    const split = b.fill.tables?.map((t) => `${t.name} ${n0(t.bytes / b.fill.messages)}`).join(", ");
    out.push({
      id: "4d",
      measure: "Bytes on disk per stored 1 KB message (row, indexes, CREATED log entry)",
      svcd: n0(b.fill.bytesPerMessage),
      baseline: split ?? "",
      result: `${n2(b.fill.bytesPerMessage / 1024)}× body`,
      target: "(report)",
      met: "n/a",
    });
  } else missing("4", "Backlog", "failed");

  if (r.fanout?.available) {
    const f = r.fanout;
    out.push({
      id: "5",
      measure: `Fan-out: 1 publish to a URL Group of ${f.endpoints}, ms until all delivered (median)`,
      svcd: n1(f.groupMs),
      baseline: `${n1(f.individualMs)} (${f.endpoints} individual publishes at once)`,
      result: `${n2(f.ratio)}×`,
      target: "(report)",
      met: "n/a",
    });
  } else missing("5", "Fan-out to a URL Group", r.fanout ? `not measured: ${(r.fanout as { reason: string }).reason}` : "failed");

  if (r.statistics?.available) {
    const s = r.statistics;
    out.push({
      id: "6",
      measure: "Statistics period=30d over 30 days of activity, p50 / p99 ms",
      svcd: `${n2(s.p50)} / ${n2(s.p99)}`,
      baseline: "",
      result: n2(s.p99),
      target: "p99 < 50",
      met: yes(s.p99 < 50),
    });
  } else missing("6", "Statistics period=30d", r.statistics ? `not measured: ${(r.statistics as { reason: string }).reason}` : "failed");

  if (r.start) {
    const s = r.start;
    out.push({
      id: "7",
      measure: `Start: compiled binary exec → 200 on /__svc/health, median of ${s.startsMs.length}, ms (fresh database)`,
      svcd: n1(s.medianMs),
      baseline: `binary ${n1(s.bytes / 1024 / 1024)} MB`,
      result: n1(s.medianMs),
      target: "(report)",
      met: "n/a",
    });
  } else missing("7", "Start of the compiled binary", "failed");

  if (r.delay) {
    const d = r.delay;
    out.push({
      id: "8",
      measure: `Delay accuracy, Svc-Delay 2s, arrival − notBefore (${d.messages} msgs), p50 / p99 / max ms`,
      svcd: `${n1(d.p50)} / ${n1(d.p99)} / ${n1(d.max)}`,
      baseline: "",
      result: `p99 ${n1(d.p99)}${d.early ? `, ${d.early} early!` : ""}${d.lost ? `, ${d.lost} lost!` : ""}`,
      target: "(report)",
      met: d.early === 0 && d.lost === 0 ? "n/a" : "no",
    });
  } else missing("8", "Delay accuracy", "failed");

  out.push(...postgresRows(r.postgres));
  if (r.tracing) {
    const t = r.tracing;
    out.push({
      id: "10",
      measure: `Tracing on / off, end to end (${n0(t.messages)} messages, every span exported to a local OTLP/HTTP collector; medians of ${t.rounds} alternating rounds), msgs/s; CPU µs per message, all threads`,
      svcd: `${n0(t.on.perSecond)}; ${n0(t.on.cpuUs)} µs`,
      baseline: `${n0(t.off.perSecond)}; ${n0(t.off.cpuUs)} µs (tracing off)`,
      result: `${n2(t.on.perSecond / t.off.perSecond)}; CPU ${n2(t.on.cpuUs / t.off.cpuUs)}×`,
      target: "(report)",
      met: "n/a",
    });
  } else missing("10", "Tracing on / off", "failed");
  return out;
}

/** Rows 1f and 2f: svcd against the durable floor, and the floor against the targets' baselines. */
function floorRows(r: Results): Row[] {
  const out: Row[] = [];
  const floor = r.floor;
  const floorOf = "the durable floor: one thread, one INSERT per publish, one DELETE per delivery";
  if (floor?.publish && r.publish) {
    const bare = r.publish.bare.rps;
    out.push({
      id: "1f",
      measure: `Publish (row 1) against ${floorOf}, req/s`,
      svcd: n0(r.publish.delayed.rps),
      baseline: `${n0(floor.publish.rps)} (floor; ${n2(floor.publish.rps / bare)} of bare Bun.serve)`,
      result: n2(r.publish.delayed.rps / floor.publish.rps),
      target: "(report)",
      met: "n/a",
    });
  }
  if (floor?.endToEnd && r.endToEnd) {
    const loop = r.endToEnd.baseline;
    out.push({
      id: "2f",
      measure: `End to end (row 2b) against ${floorOf}, msgs/s`,
      svcd: n0(r.endToEnd.run.perSecond),
      baseline: `${n0(floor.endToEnd.perSecond)} (floor; ${n2(floor.endToEnd.perSecond / loop)} of the plain fetch loop)`,
      result: n2(r.endToEnd.run.perSecond / floor.endToEnd.perSecond),
      target: "(report)",
      met: "n/a",
    });
  }
  return out;
}

/** Rows 1t, 1bt and 2t: svcd against the tight floor, the hot path's targets. */
function tightFloorRows(r: Results): Row[] {
  const out: Row[] = [];
  const floor = r.tightFloor;
  const floorOf = "the tight floor: one INSERT INTO m (id INTEGER PRIMARY KEY, url, body) per publish";
  const row = (id: string, measure: string, svcd: number, base: number, target?: number) =>
    out.push({
      id,
      measure: `${measure} against ${floorOf}`,
      svcd: n0(svcd),
      baseline: `${n0(base)} (tight floor)`,
      result: n2(svcd / base),
      target: target ? `≥ ${target}` : "(report)",
      met: target ? yes(svcd / base >= target) : "n/a",
    });
  if (floor?.publish && r.publish) row("1t", "Publish (row 1), req/s,", r.publish.delayed.rps, floor.publish.rps, 0.7);
  if (floor?.delivering && r.publish) row("1bt", "Publish while delivering (row 1b), req/s,", r.publish.svcd.rps, floor.delivering.rps);
  if (floor?.endToEnd && r.endToEnd) row("2t", "End to end (row 2b), msgs/s,", r.endToEnd.run.perSecond, floor.endToEnd.perSecond, 0.8);
  return out;
}

export function markdownTable(list: Row[]): string {
  const head = "| # | Measure | svcd | Baseline (same run) | Ratio / result | Target | Met |\n|---|---|---|---|---|---|---|";
  return [head, ...list.map((r) => `| ${r.id} | ${r.measure} | ${r.svcd} | ${r.baseline} | ${r.result} | ${r.target} | ${r.met} |`)].join("\n");
}

export function terminalTable(list: Row[]): string {
  const cols: Array<keyof Row> = ["id", "measure", "svcd", "baseline", "result", "target", "met"];
  const widths = cols.map((c) => Math.min(c === "measure" ? 70 : 40, Math.max(c.length, ...list.map((r) => r[c].length))));
  const line = (values: string[]) => values.map((v, i) => v.slice(0, widths[i]).padEnd(widths[i]!)).join("  ");
  return [line(cols), line(widths.map((w) => "-".repeat(w))), ...list.map((r) => line(cols.map((c) => r[c])))].join("\n");
}

export function machine(): string {
  const list = cpus();
  return `${list.length} cores (${list[0]?.model ?? "unknown CPU"}), Bun ${Bun.version}, ${process.platform}/${process.arch}`;
}

export function threadsSection(threads: Results["threads"]): string {
  if (!threads) return "";
  const lines = Object.entries(threads).map(
    ([phase, list]) =>
      `- ${phase}: **${n0(list.reduce((sum, t) => sum + t.ms, 0))} in all**: ${list.slice(0, 6).map((t) => `${t.name} ${n0(t.ms)}`).join(", ")}`,
  );
  return ["CPU µs per message of each of svcd's threads (from /proc/<pid>/task, this run):", "", ...lines].join("\n");
}
