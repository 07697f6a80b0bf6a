/**
 * Load soak: measures how fast svcd publishes and delivers on this machine, then publishes at half
 * that rate for SOAK_SECONDS (default 600) to a receiver that fails 10% of requests, sampling the
 * server's RSS and open file descriptors. At the end every acknowledged message must be accounted
 * for: delivered (a 200 at the receiver) or in the DLQ.
 *
 *   bun scripts/soak.ts
 *   SOAK_SECONDS=150 SOAK_CALIBRATE_SECONDS=10 SOAK_SAMPLE_SECONDS=10 bun scripts/soak.ts
 *   SOAK_RATE=800 bun scripts/soak.ts        # skip the calibration, publish 800 msg/s
 *
 * Prints the samples and a Markdown summary (the `## Soak` section of BENCHMARKS.md). Exits 1 when
 * a message is unaccounted for, or when RSS or descriptors grew steadily.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, spawnServer } from "../test/helpers/process.ts";

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CALIBRATE_SECONDS = Number(process.env.SOAK_CALIBRATE_SECONDS ?? 10);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 10);
const FAIL_RATE = Number(process.env.SOAK_FAIL_RATE ?? 0.1);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 64);
const TOKEN = "soak-token";
const auth = { authorization: `Bearer ${TOKEN}` };

// --- receiver: fails FAIL_RATE of the requests at random, remembers who got a 200 ---------------
const delivered = new Set<string>();
let attempts = 0;
let failures = 0;
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 0,
  async fetch(req) {
    await req.arrayBuffer();
    attempts++;
    if (Math.random() < FAIL_RATE) {
      failures++;
      return new Response("try again", { status: 500 });
    }
    delivered.add(req.headers.get("svc-message-id") ?? "");
    return new Response("ok");
  },
});
const rx = `http://127.0.0.1:${receiver.port}`;

// --- server: a subprocess on a fresh database -------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), "svcd-soak-"));
const server = await spawnServer(
  // Default backoff, scaled: 12 s → 120 ms, 2 m 28 s → 1.5 s, 30 m → 18 s.
  [BUN, MAIN, "--port", "0", "--db", join(dir, "soak.sqlite"), "--log-level", "warn", "--retry-delay-scale", "0.01"],
  { env: { SVC_TOKEN: TOKEN, SVC_PLAN: "payg" } },
);
const pid = server.proc.pid;

function sample() {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  return { rssMb: Math.round(rssKb / 102.4) / 10, fds };
}

// --- publishing ----------------------------------------------------------------------------------
const acked: string[] = [];
const publishMs: number[] = [];
let errors = 0;
let seq = 0;
async function publishOne() {
  const i = seq++;
  const t0 = performance.now();
  try {
    const res = await fetch(`${server.url}/v2/publish/${rx}/soak/${i}`, {
      method: "POST",
      body: `soak message ${i} ${"x".repeat(200)}`,
      headers: { ...auth, "content-type": "text/plain", "Svc-Retries": "3" },
    });
    if (res.status === 200) {
      acked.push(((await res.json()) as { messageId: string }).messageId);
      publishMs.push(performance.now() - t0);
    } else {
      errors++;
      await res.text();
    }
  } catch {
    errors++;
  }
}

const quantile = (xs: number[], q: number) => {
  if (!xs.length) return 0;
  const sorted = xs.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

// 1. Calibration: as fast as it goes; the sustainable rate is what gets delivered, not just accepted.
let rate = Number(process.env.SOAK_RATE ?? 0);
let measured = "not measured (SOAK_RATE given)";
if (!rate) {
  console.log(`calibrating for ${CALIBRATE_SECONDS} s with ${CONCURRENCY} concurrent publishers...`);
  const deliveredBefore = delivered.size;
  const ackedBefore = acked.length;
  const t0 = Date.now();
  let stop = false;
  const blaster = async () => {
    while (!stop) await publishOne();
  };
  const running = Array.from({ length: CONCURRENCY }, blaster);
  await Bun.sleep(CALIBRATE_SECONDS * 1000);
  stop = true;
  await Promise.all(running);
  const seconds = (Date.now() - t0) / 1000;
  const published = (acked.length - ackedBefore) / seconds;
  const deliveredRate = (delivered.size - deliveredBefore) / seconds;
  const max = Math.min(published, deliveredRate / (1 - FAIL_RATE));
  rate = Math.max(1, Math.floor(max / 2));
  measured = `${published.toFixed(0)} publishes/s accepted and ${deliveredRate.toFixed(0)} deliveries/s over ${CALIBRATE_SECONDS} s with ${CONCURRENCY} concurrent publishers`;
  console.log(
    `maximum: ${published.toFixed(0)} publishes/s accepted, ${deliveredRate.toFixed(0)} deliveries/s; soaking at ${rate} msg/s`,
  );
  // Let the calibration backlog drain so the soak starts from a steady state.
  const drainUntil = Date.now() + 60_000;
  while (delivered.size < acked.length * (1 - FAIL_RATE ** 2) && Date.now() < drainUntil) await Bun.sleep(200);
}

// 2. Soak at `rate` for SOAK_SECONDS, sampling RSS and descriptors.
const samples: Array<{ t: number; rssMb: number; fds: number; acked: number; delivered: number; backlog: number }> = [];
const soakStart = Date.now();
const publishedAtStart = acked.length;
publishMs.length = 0; // latencies of the soak only, not of the calibration's saturation
let inFlight = 0;
let dropped = 0;
const tick = setInterval(() => {
  // Pace in 50 ms steps; never more than CONCURRENCY publishes outstanding (a slow server slows us).
  const due = Math.round((rate * (Date.now() - soakStart)) / 1000) - (acked.length - publishedAtStart) - inFlight - dropped;
  for (let k = 0; k < due; k++) {
    if (inFlight >= CONCURRENCY * 4) {
      dropped++;
      continue;
    }
    inFlight++;
    void publishOne().finally(() => inFlight--);
  }
}, 50);
const take = () => {
  const s = sample();
  samples.push({ t: Math.round((Date.now() - soakStart) / 1000), ...s, acked: acked.length, delivered: delivered.size, backlog: acked.length - delivered.size });
  const last = samples.at(-1)!;
  console.log(`t=${last.t}s rss=${last.rssMb} MB fds=${last.fds} acked=${last.acked} delivered=${last.delivered} backlog=${last.backlog}`);
};
take();
const sampler = setInterval(take, SAMPLE_SECONDS * 1000);
await Bun.sleep(SOAK_SECONDS * 1000);
clearInterval(tick);
clearInterval(sampler);
while (inFlight > 0) await Bun.sleep(10);
take();
const soakSeconds = (Date.now() - soakStart) / 1000;
const soakPublished = acked.length - publishedAtStart;

// 3. Accounting: every acknowledged message delivered or in the DLQ.
const dlq = new Set<string>();
async function readDlq() {
  dlq.clear();
  let cursor: string | undefined;
  do {
    const res = await fetch(`${server.url}/v2/dlq?count=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: auth });
    const page = (await res.json()) as { cursor?: string; messages: Array<{ messageId: string }> };
    for (const m of page.messages) dlq.add(m.messageId);
    cursor = page.cursor;
  } while (cursor);
}
const settleUntil = Date.now() + 120_000;
let missing: string[] = [];
for (;;) {
  await readDlq();
  missing = acked.filter((id) => !delivered.has(id) && !dlq.has(id));
  if (missing.length === 0 || Date.now() > settleUntil) break;
  await Bun.sleep(1000);
}
const bothWays = [...dlq].filter((id) => delivered.has(id));
const exitCode = await server.stop("SIGTERM");
receiver.stop(true);
rmSync(dir, { recursive: true, force: true });

// 4. Report.
const third = Math.max(1, Math.floor(samples.length / 3));
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const early = samples.slice(1, 1 + third);
const late = samples.slice(-third);
const rssEarly = avg(early.map((s) => s.rssMb));
const rssLate = avg(late.map((s) => s.rssMb));
const fdEarly = avg(early.map((s) => s.fds));
const fdLate = avg(late.map((s) => s.fds));
const rssGrowth = (rssLate - rssEarly) / rssEarly;
const summary = [
  `| figure | value |`,
  `|---|---|`,
  `| machine | ${navigator.hardwareConcurrency} cores, Bun ${Bun.version}, ${process.platform} |`,
  `| measured maximum | ${measured} |`,
  `| soak duration | ${soakSeconds.toFixed(0)} s at ${rate} msg/s (half the measured maximum) |`,
  `| published (soak) | ${soakPublished} acknowledged, ${errors} failed publishes, ${dropped} skipped by the pacer |`,
  `| receiver | ${attempts} attempts, ${failures} answered 500 (${((failures / Math.max(1, attempts)) * 100).toFixed(1)}%) |`,
  `| accounted for (calibration + soak) | ${acked.length - missing.length} of ${acked.length}: ${delivered.size} delivered, ${dlq.size} in the DLQ, ${missing.length} missing, ${bothWays.length} both delivered and in the DLQ |`,
  `| publish latency (soak) | p50 ${quantile(publishMs, 0.5).toFixed(1)} ms, p99 ${quantile(publishMs, 0.99).toFixed(1)} ms |`,
  `| server RSS | ${samples[0]!.rssMb} MB at start, ${Math.min(...samples.map((s) => s.rssMb))}–${Math.max(...samples.map((s) => s.rssMb))} MB over the soak, first third avg ${rssEarly.toFixed(0)} MB, last third avg ${rssLate.toFixed(0)} MB (${(rssGrowth * 100).toFixed(1)}%) |`,
  `| open descriptors | ${Math.min(...samples.map((s) => s.fds))}–${Math.max(...samples.map((s) => s.fds))}, first third avg ${fdEarly.toFixed(0)}, last third avg ${fdLate.toFixed(0)} |`,
  `| backlog at the end of the soak | ${samples.at(-1)!.backlog} |`,
  `| exit on SIGTERM | ${exitCode} |`,
].join("\n");
console.log(`\n${summary}\n`);
console.log(`samples (t s, RSS MB, fds): ${samples.map((s) => `${s.t}:${s.rssMb}/${s.fds}`).join(" ")}`);

if (process.env.SOAK_WRITE === "1") writeSoakSection();

/**
 * Replaces (or appends) only the `## Soak` section of BENCHMARKS.md; the rest of the file belongs
 * to scripts/bench.ts.
 */
function writeSoakSection() {
  const path = new URL("../BENCHMARKS.md", import.meta.url).pathname;
  const current = existsSync(path) ? readFileSync(path, "utf8") : "# Benchmarks\n";
  const command = `SOAK_SECONDS=${SOAK_SECONDS} bun scripts/soak.ts`;
  const section = [
    "## Soak",
    "",
    `Latest run: ${new Date().toISOString()}, command \`${command}\` (\`SOAK_WRITE=1\` writes this section).`,
    "A receiver fails 10% of the attempts at random; messages are published with `Svc-Retries: 3` and the",
    "default backoff scaled by `--retry-delay-scale 0.01`. RSS and descriptors are read from `/proc` of the",
    `svcd subprocess every ${SAMPLE_SECONDS} s.`,
    "",
    summary,
    "",
    `Samples (t s: RSS MB / open fds): ${samples.map((s) => `${s.t}: ${s.rssMb}/${s.fds}`).join(", ")}.`,
    "",
  ].join("\n");
  const start = current.indexOf("\n## Soak\n");
  let next: string;
  if (start < 0) next = `${current.trimEnd()}\n\n${section}`;
  else {
    const end = current.indexOf("\n## ", start + 1);
    next = current.slice(0, start + 1) + section + (end < 0 ? "" : current.slice(end));
  }
  writeFileSync(path, next);
  console.log(`wrote the Soak section of ${path}`);
}

const problems: string[] = [];
if (missing.length) problems.push(`${missing.length} acknowledged message(s) neither delivered nor in the DLQ, e.g. ${missing.slice(0, 5).join(", ")}`);
if (bothWays.length) problems.push(`${bothWays.length} message(s) delivered and in the DLQ`);
// Flat means: no steady growth beyond noise (SQLite's page cache and the allocator settle early).
if (samples.length >= 6 && rssGrowth > 0.25) problems.push(`RSS grew ${(rssGrowth * 100).toFixed(0)}% from the first to the last third`);
if (samples.length >= 6 && fdLate > fdEarly + 20) problems.push(`open descriptors grew from ${fdEarly.toFixed(0)} to ${fdLate.toFixed(0)}`);
if (exitCode !== 0) problems.push(`svcd exited with ${exitCode} on SIGTERM`);
if (problems.length) {
  for (const p of problems) console.error(`PROBLEM: ${p}`);
  process.exit(1);
}
console.log("soak held: every message accounted for, RSS and descriptors flat");
