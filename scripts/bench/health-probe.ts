/**
 * A liveness probe as an orchestrator runs it, in a process of its own so that the bench's load
 * generator never delays its answers: `GET <target>` every `intervalMs`, one at a time (the next
 * one starts `intervalMs` after the previous one started, or at once when that one took longer),
 * each answer's latency recorded from the request's start to its body read.
 *
 *   bun scripts/bench/health-probe.ts <target URL> [intervalMs = 10]
 *
 * Prints "listening on <control URL>"; then POST <control>/begin starts probing, and
 * POST <control>/end stops it and answers {latencies: [ms…], failed, firstError}.
 */
export {};

const [target, interval = "10"] = process.argv.slice(2);
if (!target) throw new Error("usage: health-probe.ts <target URL> [intervalMs]");
const intervalMs = Number(interval);

let latencies: number[] = [];
let failed = 0;
let firstError: string | undefined;
let probing: Promise<void> | null = null;
let stop = false;

async function probe() {
  while (!stop) {
    const started = performance.now();
    try {
      const res = await fetch(target!);
      await res.text();
      if (!res.ok) throw new Error(`status ${res.status}`);
      latencies.push(performance.now() - started);
    } catch (error) {
      failed++;
      firstError ??= String((error as Error)?.message ?? error);
    }
    const wait = started + intervalMs - performance.now();
    if (wait > 0) await Bun.sleep(wait);
  }
}

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/begin" && !probing) {
      [latencies, failed, firstError, stop] = [[], 0, undefined, false];
      probing = probe();
      return new Response("ok");
    }
    if (path === "/end" && probing) {
      stop = true;
      await probing;
      probing = null;
      return Response.json({ latencies, failed, firstError });
    }
    return new Response("not found", { status: 404 });
  },
});
console.log(`listening on ${server.url.href.replace(/\/$/, "")}`);
