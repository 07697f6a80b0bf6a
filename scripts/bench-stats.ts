/**
 * Cost of messaging statistics: 30 days of per-minute rollups for one account, then
 * `GET /v2/svc/stats/{id}?period=30d` ~200 times against an in-process server.
 * Target: p99 under 50 ms. Run: `bun scripts/bench-stats.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig, type ServerConfig } from "../src/config/config.ts";
import { silentLogger } from "../src/core/log.ts";
import { MetricsEngine } from "../src/metrics/engine.ts";
import { SqliteRollupStore } from "../src/engines/sqlite/rollups.ts";
import { MessagingMetric } from "../src/metrics/usage.ts";
import { createServer } from "../src/server.ts";

const DAYS = 31;
const REQUESTS = 200;

export async function benchStats(): Promise<{ p50: number; p99: number }> {
  const dir = mkdtempSync(join(tmpdir(), "svcd-bench-stats-"));
  const config: ServerConfig = { ...defaultConfig(dir), port: 0, dbPath: join(dir, "svcd.sqlite"), logLevel: "error" };
  const server = await createServer(config, { logger: silentLogger });
  try {
    const running = await server.start();
    const account = config.defaultAccount;
    if (server.storage.kind !== "sqlite") throw new Error("the statistics benchmark runs on SQLite");
    fill(server.storage.db, account.userId);

    const url = `${running.managementUrl}/v2/svc/stats/${account.userId}?period=30d`;
    const headers = { authorization: "Basic " + Buffer.from(`${account.email}:${account.apiKey}`).toString("base64") };
    for (let i = 0; i < 10; i++) await (await fetch(url, { headers })).arrayBuffer(); // warm up
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`stats answered ${res.status}`);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;
    return { p50: round(at(0.5)), p99: round(at(0.99)) };
  } finally {
    await server.stop({ deadlineMs: 500 });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every messaging metric, every minute of the last 31 days, flushed a day at a time. */
function fill(db: import("bun:sqlite").Database, owner: string): void {
  const engine = new MetricsEngine(new SqliteRollupStore(db), { kind: "real", now: Date.now, at: () => () => {}, onAdvance: () => () => {} });
  const metrics = Object.values(MessagingMetric);
  const nowMin = Math.floor(Date.now() / 60_000);
  for (let day = DAYS; day > 0; day--) {
    for (let m = 0; m < 1440; m++) {
      const atMs = (nowMin - day * 1440 + m) * 60_000;
      for (const [i, metric] of metrics.entries()) engine.count(owner, metric, 1 + ((m + i) % 7), atMs);
    }
    engine.flush();
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;

if (import.meta.main) {
  const t0 = performance.now();
  const result = await benchStats();
  console.log(JSON.stringify({ ...result, targetP99: 50, ok: result.p99 < 50, seconds: round((performance.now() - t0) / 1000) }));
}
