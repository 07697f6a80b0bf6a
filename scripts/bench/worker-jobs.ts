/**
 * The delivery worker alone: CPU µs per job of each thread, A/B of two checkouts in one run.
 *
 *   bun scripts/bench/worker-jobs.ts --a <checkout A> [--b <checkout B, default this one>]
 *       [--rounds 5] [--jobs 20000] [--in-flight 64] [--bare] [--together]
 *
 * Each side runs in a process of its own (Bun's HTTP client thread is per process): it starts the
 * checkout's real src/delivery/worker.ts and feeds it jobs the way the pool does (packed batches,
 * one message per turn, a new job for every outcome, `--in-flight` under way), each a signed 1 KB
 * POST to a local sink process. It reports CPU µs per job of its threads (/proc/self/task): the
 * delivery worker, Bun's HTTP client thread, its own main thread (the pool's side: packing jobs,
 * unpacking outcomes) and the rest. `--bare` adds a third side: the same POSTs as a plain fetch
 * loop on one worker thread (no signing, no timeout signal, no answer reading beyond bytes()).
 * Sides alternate their order each round, or with `--together` run at the same time (the load
 * of whoever else uses the machine then falls on both alike; they slow each other down, so their
 * absolute numbers are higher). The table shows medians, and the median of each round's B − A.
 */
import { parseArgs } from "node:util";
import { startSink } from "./procs.ts";
import { median } from "./stats.ts";
import { threadDelta, threadTimes } from "./threads.ts";

const { values } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string" },
    rounds: { type: "string", default: "5" },
    jobs: { type: "string", default: "20000" },
    "in-flight": { type: "string", default: "64" },
    bare: { type: "boolean", default: false },
    together: { type: "boolean", default: false },
    // Internal: one side's run.
    child: { type: "string" },
    sink: { type: "string" },
  },
});
const jobs = Number(values.jobs);
const inFlight = Number(values["in-flight"]);
const ROOT = new URL("../../", import.meta.url).pathname;

type Sample = { rate: number; cpu: Record<string, number> };
const GROUPS = ["worker", "http client", "main", "other", "all"];
const group = (name: string) =>
  name.endsWith("(main)")
    ? "main"
    : name.startsWith("Worker")
      ? "worker"
      : name.startsWith("HTTP Client")
        ? "http client"
        : "other";

if (values.child !== undefined) {
  console.log(JSON.stringify(await runSide(values.child, values.sink!)));
  process.exit(0);
}
if (!values.a) {
  console.error("usage: bun scripts/bench/worker-jobs.ts --a <checkout> [--b <checkout>] [--rounds N] [--jobs N] [--bare]");
  process.exit(2);
}

const sides = [
  { name: "A", root: values.a },
  { name: "B", root: values.b ?? ROOT },
  ...(values.bare ? [{ name: "bare", root: "bare" }] : []),
];
const samples = new Map<string, Sample[]>();
const sink = await startSink();
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    // Together: the sides run at the same time, so the machine's other load falls on all alike.
    const results = values.together ? await Promise.all(order.map(runChild)) : [];
    if (!values.together) for (const side of order) results.push(await runChild(side));
    order.forEach((side, i) => {
      const s = results[i]!;
      samples.set(side.name, [...(samples.get(side.name) ?? []), s]);
      const cpu = GROUPS.map((k) => `${k} ${s.cpu[k]!.toFixed(1)}`).join(", ");
      console.error(`round ${round + 1} ${side.name}: ${Math.round(s.rate)} jobs/s; µs/job ${cpu}`);
    });
  }
} finally {
  await sink.stop();
}

async function runChild(side: { name: string; root: string }): Promise<Sample> {
  const child = Bun.spawn(
    [process.execPath, import.meta.path, "--child", side.root, "--sink", sink.url]
      .concat(["--jobs", String(jobs), "--in-flight", String(inFlight)]),
    { stdout: "pipe", stderr: "inherit" },
  );
  const text = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`side ${side.name} failed`);
  return JSON.parse(text.trim().split("\n").pop()!) as Sample;
}

console.log(`\n${sides.map((s) => `${s.name} = ${s.root}`).join("\n")}\n${jobs} jobs per run, ${inFlight} under way\n`);
console.log(`| side | jobs/s | CPU µs/job: ${GROUPS.join(" | ")} |\n|---|---|${GROUPS.map(() => "---|").join("")}`);
for (const side of sides) {
  const list = samples.get(side.name) ?? [];
  const cols = GROUPS.map((k) => median(list.map((s) => s.cpu[k]!)).toFixed(1));
  console.log(`| ${side.name} | ${Math.round(median(list.map((s) => s.rate)))} | ${cols.join(" | ")} |`);
}
// Each round's B minus A: with --together the two ran under the same load, so the pairs vary far
// less than the sides do from round to round.
const pairs = (k: string) => (samples.get("A") ?? []).map((a, i) => samples.get("B")![i]!.cpu[k]! - a.cpu[k]!);
console.log(`| B − A, median of the rounds' pairs | | ${GROUPS.map((k) => median(pairs(k)).toFixed(1)).join(" | ")} |`);
console.log(`\nworker B − A per round: ${pairs("worker").map((d) => d.toFixed(1)).join(", ")}`);
process.exit(0);

/** One side: the checkout's worker (or the bare loop) fed `jobs` jobs after a warm-up. */
async function runSide(root: string, sinkUrl: string): Promise<Sample> {
  const bare = root === "bare";
  const wire = bare ? null : ((await import(`${root}/src/delivery/wire.ts`)) as typeof import("../../src/delivery/wire.ts"));
  const worker = new Worker(bare ? new URL("./bare-fetch-worker.ts", import.meta.url).href : `${root}/src/delivery/worker.ts`);
  worker.postMessage({ type: "hello", workerId: 0, workers: 1 });
  const body = new Uint8Array(1024).fill(120);
  let ticket = 0;
  const job = () => ({
    ticket: ++ticket,
    messageId: `msg_bench${ticket}`,
    url: `${sinkUrl}/worker-jobs`,
    method: "POST",
    headers: [
      ["Content-Type", "application/octet-stream"],
      ["User-Agent", "Upstash-QStash"],
      ["Upstash-Message-Id", `msg_bench${ticket}`],
      ["Upstash-Retried", "0"],
      ["Upstash-Region", "eu-central-1"],
    ],
    body,
    timeoutMs: 30_000,
    signingKey: "sig_2oGx4BfbH4wWmXWoWUXnLmNJnFqK",
    issuer: "Upstash",
    signatureHeader: "Upstash-Signature",
    maxResponseBytes: 1_048_576,
    headersOf2xx: false,
  });
  const pack = (list: ReturnType<typeof job>[]) =>
    bare ? { text: JSON.stringify(list.map((j) => ({ ...j, body: undefined }))), body } : wire!.packJobs(list as never);

  let pending: ReturnType<typeof job>[] = [];
  const send = (n: number) => {
    for (let i = 0; i < n; i++) pending.push(job());
    if (pending.length === n)
      queueMicrotask(() => {
        const packed = pack(pending);
        pending = [];
        worker.postMessage({ type: "deliver", jobs: packed }, "bodies" in packed ? [packed.bodies] : []);
      });
  };
  const phase = (count: number) =>
    new Promise<number>((resolve) => {
      let sent = 0;
      let done = 0;
      const t0 = performance.now();
      const more = (n: number) => {
        const k = Math.min(n, count - sent);
        if (k > 0) send(k);
        sent += k;
      };
      worker.onmessage = (event: MessageEvent<{ type: string; outcomes: never; n?: number }>) => {
        if (event.data.type !== "outcomes") return;
        const n = bare ? event.data.n! : wire!.unpackOutcomes(event.data.outcomes).length;
        done += n;
        if (done >= count) resolve(performance.now() - t0);
        else more(n);
      };
      more(inFlight);
    });
  await phase(2000);
  const before = threadTimes(process.pid);
  const ms = await phase(jobs);
  const cpu: Record<string, number> = Object.fromEntries(GROUPS.map((k) => [k, 0]));
  for (const t of threadDelta(before, threadTimes(process.pid))) {
    cpu[group(t.name)]! += (t.ms * 1000) / jobs;
    cpu.all! += (t.ms * 1000) / jobs;
  }
  worker.terminate();
  return { rate: (jobs * 1000) / ms, cpu };
}
