/**
 * (7) Start: the compiled binary (`bun scripts/build.ts <path>`) from exec to the first 200 on
 * /__svc/health, each start on a fresh database (migrations included), median of N; plus the
 * binary's size. The port is picked beforehand so health can be polled from the first instant.
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH } from "./config.ts";
import { removeDir } from "./procs.ts";
import { median } from "./stats.ts";
import { BUN } from "../../test/helpers/process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface StartResult {
  bytes: number;
  buildSeconds: number;
  startsMs: number[];
  medianMs: number;
}

function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

export async function measureStart(runs = BENCH.startRuns): Promise<StartResult> {
  const dir = mkdtempSync(join(tmpdir(), "svcd-bench-bin-"));
  try {
    const binary = join(dir, "svcd");
    const t0 = performance.now();
    const build = Bun.spawnSync([BUN, join(ROOT, "scripts/build.ts"), binary], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
    const buildSeconds = (performance.now() - t0) / 1000;
    const startsMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const port = freePort();
      const db = join(dir, `start-${i}`, "svcd.sqlite");
      const started = performance.now();
      const proc = Bun.spawn([binary, "--port", String(port), "--db", db, "--log-level", "warn"], { stdout: "ignore", stderr: "ignore" });
      let ms = NaN;
      while (performance.now() - started < 15_000) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/__svc/health`);
          if (res.status === 200) {
            ms = performance.now() - started;
            break;
          }
        } catch {
          // not listening yet
        }
        await Bun.sleep(1);
      }
      proc.kill("SIGKILL");
      await proc.exited;
      startsMs.push(ms);
    }
    return { bytes: statSync(binary).size, buildSeconds, startsMs, medianMs: median(startsMs) };
  } finally {
    removeDir(dir);
  }
}
