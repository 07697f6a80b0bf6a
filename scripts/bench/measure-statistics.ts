/**
 * (6) Statistics: `period=30d` messaging statistics over 30 days of recorded activity. The
 * measurement itself lives in scripts/bench-stats.ts (written with the statistics engine); this
 * calls it when it exists and reports "not measured" otherwise.
 */
import { existsSync } from "node:fs";

export type StatisticsResult = { available: true; p50: number; p99: number } | { available: false; reason: string };

const FILE = new URL("../bench-stats.ts", import.meta.url).pathname;

export async function measureStatistics(): Promise<StatisticsResult> {
  if (!existsSync(FILE)) return { available: false, reason: "scripts/bench-stats.ts not available" };
  const mod = (await import(FILE)) as { benchStats?: () => Promise<{ p50: number; p99: number }> };
  if (typeof mod.benchStats !== "function") return { available: false, reason: "scripts/bench-stats.ts exports no benchStats()" };
  const { p50, p99 } = await mod.benchStats();
  return { available: true, p50, p99 };
}
