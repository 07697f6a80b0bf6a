import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCrashScenario } from "../helpers/crash-harness.ts";

/**
 * kill -9 at three random moments while 5,000 messages are published and delivered (some
 * delayed, some retried after a failed first attempt, some failing into the DLQ, some fanned out
 * through a URL Group), restarting on the same database each time. CRASH_SEED reproduces a run;
 * scripts/crash-soak.ts runs many of them.
 */

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svcd-crash9-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test(`kill -9 three times during 5,000 publishes and deliveries (seed ${SEED}): nothing acknowledged is lost`, async () => {
  const report = await runCrashScenario({ dir, total: 5_000, kills: 3, seed: SEED, groups: true });
  if (report.problems.length) console.error(`crash seed ${SEED}:`, report);
  expect(report.problems).toEqual([]);
  expect(report.kills).toBe(3);
  // Every category was exercised: 5,000 publishes, a tenth of them to a two-endpoint group.
  expect(report.acked).toBe(5_500);
  // 500 acknowledged failures, plus any unacknowledged copy of one that was stored just before a kill.
  expect(report.dlqEntries).toBeGreaterThanOrEqual(500);
  expect(report.retriesChecked).toBeGreaterThanOrEqual(1_000);
  expect(report.delaysChecked).toBe(500);
  expect(report.deliveries).toBeGreaterThanOrEqual(5_000);
}, 100_000);
