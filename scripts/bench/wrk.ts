/**
 * The closed-loop load generator when `wrk` is installed: one native process whose cost per
 * request is a fraction of a Bun fetch loop's, so it does not cap the servers it drives (a single
 * Bun process tops out near 30k requests/s on two cores; wrk goes past 40k here).
 * A Lua script sets the method, headers and body, counts answers that are not 2xx, and in count
 * mode stops each thread after its share of the requests.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadResult } from "./load.ts";

/** `wrk` on PATH (BENCH_GENERATOR=bun forces the Bun generator even when it is there). */
export function wrkPath(): string | null {
  if (process.env.BENCH_GENERATOR === "bun") return null;
  return Bun.which("wrk");
}

export interface WrkRun {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array;
  connections: number;
  threads: number;
  /** Duration mode: measure this long (after a separate warm-up run of `warmupMs`)… */
  durationMs?: number;
  warmupMs?: number;
  /** …or count mode: stop after about this many answers (each thread its share). */
  requests?: number;
}

const SCRIPT = `
-- Globals, not locals: done() reads them from each thread with thread:get().
counted_limit = 0
answered = 0
failed = 0
first_error = ""
threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.body = f:read("*a")
  f:close()
  local h = assert(io.open(args[2], "r"))
  for line in h:lines() do
    local name, value = line:match("^([^:]+): (.*)$")
    if name then wrk.headers[name] = value end
  end
  h:close()
  wrk.method = args[3]
  counted_limit = tonumber(args[4]) or 0
  -- Without a response() wrk does not parse answers in Lua (a measurable share of its CPU): in
  -- duration mode the failures are the answers >= 400 of its summary.
  if counted_limit == 0 then response = nil end
end

function response(status, headers, body)
  answered = answered + 1
  if status < 200 or status > 299 then
    failed = failed + 1
    if first_error == "" then first_error = "HTTP " .. status .. ": " .. string.sub(body or "", 1, 200) end
  end
  if counted_limit > 0 and answered == counted_limit then
    -- wrk's main thread sleeps for the whole duration: it is told (SIGINT) once every thread is done.
    io.write("WRK_THREAD_DONE\\n")
    io.flush()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local answered_all, failed_all, err = 0, 0, ""
  for _, t in ipairs(threads) do
    answered_all = answered_all + t:get("answered")
    failed_all = failed_all + t:get("failed")
    if err == "" then err = t:get("first_error") end
  end
  local e = summary.errors
  if answered_all == 0 then
    answered_all = summary.requests
    failed_all = e.status
    if failed_all > 0 then err = failed_all .. " answers with a status of 400 or more" end
  end
  io.write(string.format('\\nWRK_RESULT {"answered":%d,"failed":%d,"duration_us":%d,"socket_errors":%d,"first_error":%q}\\n',
    answered_all, failed_all, summary.duration, e.connect + e.read + e.write + e.timeout, err))
end
`;

async function runWrk(wrk: string, dir: string, run: WrkRun, durationMs: number, perThread: number) {
  const args = [
    wrk,
    "-t", String(run.threads),
    "-c", String(run.connections),
    "-d", `${Math.max(1, Math.ceil(durationMs / 1000))}s`,
    "--timeout", "30s",
    "-s", join(dir, "load.lua"),
    run.url,
    "--",
    join(dir, "body"),
    join(dir, "headers"),
    run.method,
    String(perThread),
  ];
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  let out = "";
  const readOut = (async () => {
    const decoder = new TextDecoder();
    let done = 0;
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk, { stream: true });
      const seen = out.split("WRK_THREAD_DONE").length - 1;
      if (seen > done && seen >= run.threads) proc.kill("SIGINT");
      done = seen;
    }
  })();
  const [, err] = await Promise.all([readOut, new Response(proc.stderr).text()]);
  await proc.exited;
  const line = /WRK_RESULT (\{.*\})/.exec(out)?.[1];
  if (!line) throw new Error(`wrk gave no result (exit ${proc.exitCode}): ${err || out}`);
  // Lua's %q escapes newlines as a backslash followed by a newline: not JSON.
  return JSON.parse(line.replace(/\\\n/g, "\\n")) as {
    answered: number;
    failed: number;
    duration_us: number;
    socket_errors: number;
    first_error: string;
  };
}

/** One closed-loop run with wrk; the same result shape as the Bun generator's. */
export async function wrkLoad(wrk: string, run: WrkRun): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "svcd-bench-wrk-"));
  try {
    writeFileSync(join(dir, "load.lua"), SCRIPT);
    writeFileSync(join(dir, "body"), run.body);
    writeFileSync(join(dir, "headers"), Object.entries(run.headers).map(([k, v]) => `${k}: ${v}`).join("\n") + "\n");
    if (run.requests !== undefined) {
      const perThread = Math.ceil(run.requests / run.threads);
      const t0 = performance.now();
      // Count mode: a generous duration bounds it should the server stall.
      const r = await runWrk(wrk, dir, run, 600_000, perThread);
      const seconds = (performance.now() - t0) / 1000;
      const ok = r.answered - r.failed;
      return { ok, total: ok, failed: r.failed + r.socket_errors, seconds, rps: ok / seconds, firstError: r.first_error || undefined };
    }
    const warm = run.warmupMs ? await runWrk(wrk, dir, run, run.warmupMs, 0) : { answered: 0, failed: 0 };
    const r = await runWrk(wrk, dir, run, run.durationMs ?? 8000, 0);
    const seconds = r.duration_us / 1e6;
    const ok = r.answered - r.failed;
    return { ok, total: ok + warm.answered - warm.failed, failed: r.failed + r.socket_errors, seconds, rps: ok / seconds, firstError: r.first_error || undefined };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
