/**
 * The long version of test/integration/crash-kill9.test.ts: many runs, each killing svcd with
 * SIGKILL at random moments while messages are published and delivered, restarting it on the same
 * database, and checking that nothing acknowledged was lost (see test/helpers/crash-harness.ts).
 *
 *   bun scripts/crash-soak.ts
 *   CRASH_ITERATIONS=50 CRASH_KILLS=6 CRASH_MESSAGES=10000 CRASH_SEED=42 bun scripts/crash-soak.ts
 *
 * Exits 1 at the first run whose promises did not hold, printing its seed to reproduce it with
 * `CRASH_SEED=<seed> bun test test/integration/crash-kill9.test.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCrashScenario } from "../test/helpers/crash-harness.ts";

const iterations = Number(process.env.CRASH_ITERATIONS ?? 20);
const kills = Number(process.env.CRASH_KILLS ?? 5);
const total = Number(process.env.CRASH_MESSAGES ?? 5_000);
const firstSeed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
const groups = process.env.CRASH_GROUPS !== "0";

let acked = 0;
let duplicates = 0;
let killCount = 0;
const started = Date.now();
for (let n = 0; n < iterations; n++) {
  const seed = firstSeed + n;
  const dir = mkdtempSync(join(tmpdir(), "svcd-crash-soak-"));
  try {
    const report = await runCrashScenario({ dir, total, kills, seed, groups });
    acked += report.acked;
    duplicates += report.duplicates;
    killCount += report.kills;
    const line = `run ${n + 1}/${iterations} seed ${seed}: ${report.acked} acknowledged, ${report.kills} kills, ` +
      `${report.duplicates} duplicate deliveries, ${report.retriesChecked} retries and ${report.delaysChecked} delays on schedule, ` +
      `${report.dlqEntries} in the DLQ, ${(report.durationMs / 1000).toFixed(1)} s`;
    console.log(line);
    if (report.problems.length) {
      console.error(`FAILED (seed ${seed}): kills ${report.killedAt.join("; ")}`);
      for (const p of report.problems) console.error(`  - ${p}`);
      process.exit(1);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `all ${iterations} runs held: ${acked} acknowledged messages, ${killCount} kills, ${duplicates} duplicate deliveries ` +
    `(at-least-once), ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
