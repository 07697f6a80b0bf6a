/** The processes a run needs: svcd under test, the delivery sink and the bare baseline server. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, spawnServer, type ServerProcess } from "../../test/helpers/process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
export const BENCH_TOKEN = "bench_token_0123456789";

/** Current and peak resident set of a process, in MB (Linux /proc). */
export async function memoryOf(pid: number): Promise<{ rssMb: number; peakMb: number }> {
  try {
    const status = await Bun.file(`/proc/${pid}/status`).text();
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
  } catch {
    return { rssMb: NaN, peakMb: NaN };
  }
}

export interface Svcd {
  url: string;
  pid: number;
  dir: string;
  dbPath: string;
  auth: Record<string, string>;
  /** Publish URL for a destination URL or URL Group name. */
  publishUrl(destination: string): string;
  memory(): Promise<{ rssMb: number; peakMb: number }>;
  stop(): Promise<void>;
}

/**
 * Starts `bun src/main.ts` on a free port with its own database directory (or the given one) and
 * waits for its "listening on" line.
 */
export async function startSvcd(
  opts: { dir?: string; extraArgs?: string[]; bunArgs?: string[]; root?: string; db?: string; env?: Record<string, string> } = {},
): Promise<Svcd> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "svcd-bench-"));
  // `db`: a PostgreSQL URL instead of a SQLite file in `dir`.
  const dbPath = opts.db ?? join(dir, "svcd.sqlite");
  const args = ["--port", "0", "--db", dbPath, "--log-level", "warn", ...(opts.extraArgs ?? [])];
  // `root`: another checkout of svcd, to compare two versions on the same machine in one run.
  const proc = await spawnServer([BUN, ...(opts.bunArgs ?? []), join(opts.root ?? ROOT, "src/main.ts"), ...args], {
    cwd: ROOT,
    env: { SVC_TOKEN: BENCH_TOKEN, ...opts.env },
    timeoutMs: 60_000,
  });
  const pid = proc.proc.pid;
  return {
    url: proc.url,
    pid,
    dir,
    dbPath,
    auth: { authorization: `Bearer ${BENCH_TOKEN}` },
    publishUrl: (destination) => `${proc.url}/v2/publish/${destination}`,
    memory: () => memoryOf(pid),
    async stop() {
      const code = await proc.stop("SIGTERM");
      if (code !== 0) process.stderr.write(`svcd exited with ${code}:\n${proc.output().slice(-2000)}\n`);
    },
  };
}

export function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
}

/** What a publishing load needs of a server: svcd, or the durable floor. */
export type Publishable = Pick<Svcd, "auth" | "publishUrl">;

export interface Helper {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function startHelper(file: string, args: string[] = []): Promise<Helper> {
  const proc: ServerProcess = await spawnServer([BUN, join(ROOT, "scripts/bench", file), ...args], { cwd: ROOT });
  return { url: proc.url, pid: proc.proc.pid, stop: async () => void (await proc.stop("SIGKILL")) };
}

export const startSink = () => startHelper("sink.ts");
export const startBare = () => startHelper("bare-server.ts");
/**
 * The durable floor (durable-floor.ts; `tight`: its integer-keyed form), its SQLite file in a folder of its own that `stop` removes;
 * publishes to it go through `publishUrl` as svcd's do.
 */
export async function startFloor(fronts?: number, tight = false): Promise<Helper & Publishable> {
  const dir = mkdtempSync(join(tmpdir(), "svcd-floor-"));
  const file = join(dir, "floor.sqlite");
  // With `fronts`: the floor on threads (floor-threads/writer.ts), HTTP on that many threads.
  const helper = fronts
    ? await startHelper("floor-threads/writer.ts", [file, String(fronts)])
    : await startHelper("durable-floor.ts", tight ? [file, "--tight"] : [file]);
  return {
    ...helper,
    auth: {},
    publishUrl: (destination) => `${helper.url}/v2/publish/${destination}`,
    stop: async () => {
      await helper.stop();
      removeDir(dir);
    },
  };
}

/** Sink control: counts and arrival stamps since the last reset. */
export class SinkClient {
  constructor(readonly url: string) {}
  async reset() {
    await fetch(`${this.url}/__sink/reset`, { method: "POST" });
  }
  async stats(): Promise<{ count: number; firstAt: number; lastAt: number }> {
    return (await fetch(`${this.url}/__sink/stats`)).json() as never;
  }
  async arrivals(): Promise<Map<string, number>> {
    const { ids, times } = (await (await fetch(`${this.url}/__sink/arrivals`)).json()) as { ids: string[]; times: number[] };
    const out = new Map<string, number>();
    ids.forEach((id, i) => {
      if (!out.has(id)) out.set(id, times[i]!);
    });
    return out;
  }
  /** Polls until no message arrived for `quietMs` (or the timeout); returns the last stats seen. */
  async waitUntilQuiet(quietMs: number, timeoutMs: number) {
    const deadline = performance.now() + timeoutMs;
    let last = await this.stats();
    let since = performance.now();
    for (;;) {
      await Bun.sleep(50);
      const s = await this.stats();
      if (s.count !== last.count) {
        last = s;
        since = performance.now();
      } else if (performance.now() - since >= quietMs || performance.now() > deadline) return s;
    }
  }
  /** Polls until `count` arrivals or the timeout; returns the last stats seen. */
  async waitForCount(count: number, timeoutMs: number) {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const s = await this.stats();
      if (s.count >= count || performance.now() > deadline) return s;
      await Bun.sleep(20);
    }
  }
}
