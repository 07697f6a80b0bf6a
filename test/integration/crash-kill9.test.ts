import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCrashScenario } from "../helpers/crash-harness.ts";
import { BUN, MAIN, spawnServer } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";

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
}, 300_000);

test("SIGTERM while an attempt hangs: svcd stops at its shutdown deadline without waiting for the attempt and delivers the message after the restart", async () => {
  let first = true;
  const arrivals: Array<{ id: string; retried: string }> = [];
  let release!: () => void;
  const hung = new Promise<void>((resolve) => (release = resolve));
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      arrivals.push({ id: req.headers.get("svc-message-id") ?? "", retried: req.headers.get("svc-retried") ?? "" });
      if (first) {
        first = false;
        await hung;
      }
      return new Response("ok");
    },
  });
  const db = join(dir, "sigterm.sqlite");
  const start = () =>
    spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "info", "--log-format", "json", "--shutdown-timeout", "300"], {
      env: { SVC_TOKEN: "term-token" },
    });
  const auth = { authorization: "Bearer term-token" };
  try {
    const server = await start();
    const res = await fetch(`${server.url}/v2/publish/http://127.0.0.1:${receiver.port}/hang`, { method: "POST", body: "x", headers: auth });
    const { messageId } = (await res.json()) as { messageId: string };
    await waitUntil(() => arrivals.length === 1, { what: "the first attempt to hang at the receiver" });
    // The receiver holds the attempt until the end of the test: a stop that waited for it would
    // never end. It ended at its deadline, cut the attempt off, and left the message for the next start.
    expect(await server.stop("SIGTERM")).toBe(0);
    const stopped = server
      .output()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === "stopped");
    expect(stopped).toMatchObject({ inFlightAtStop: 1, drained: 0, redeliveredAtNextStart: 1 });

    const again = await start();
    try {
      await waitUntil(() => arrivals.length >= 2, { what: "the message to be delivered again after the restart" });
      expect(arrivals.map((a) => a.id)).toEqual([messageId, messageId]);
      const logs = await waitUntil(async () => {
        const body = (await (await fetch(`${again.url}/v2/logs?messageId=${messageId}`, { headers: auth })).json()) as { logs: Array<{ state: string }> };
        return body.logs[0]?.state === "DELIVERED" ? body.logs : undefined;
      }, { what: "DELIVERED in the log" });
      expect(logs.filter((l) => l.state === "DELIVERED")).toHaveLength(1);
    } finally {
      expect(await again.stop("SIGTERM")).toBe(0);
    }
  } finally {
    release();
    receiver.stop(true);
  }
}, 150_000);
