/**
 * (2) Delivery throughput: N messages published (64 connections), all due at the same second
 * (Svc-Not-Before), then delivered by svcd to the sink; messages delivered per second at the
 * sink, first arrival to last. Baseline: a plain fetch loop in this process sending N POSTs with
 * the same body straight to the same sink, at 64 and at 256 requests at once; the faster of the
 * two counts (Bun's fetch keeps 64 keep-alive connections per process: past 64 at once it opens a
 * connection for most requests, and 256 is as many as it runs at once).
 */
import { BENCH } from "./config.ts";
import { closedLoop, wallNow, type LoadResult } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { SinkClient, Svcd } from "./procs.ts";

export const DELIVERY_CONCURRENCY = process.env.BENCH_DELIVERY_CONCURRENCY
  ? [Number(process.env.BENCH_DELIVERY_CONCURRENCY)]
  : [64, 256];

export interface DeliveryRun {
  messages: number;
  publish: LoadResult;
  /** Messages that had already arrived when the last publish was answered (should be 0). */
  arrivedDuringPublish: number;
  delivered: number;
  seconds: number;
  perSecond: number;
}

/**
 * svcd's side. `publishRps` (from the publish measurement) sizes the wait: every message is due at
 * one second after the publishing should be over, so delivery starts from a full table.
 */
export async function deliveryRun(
  svcd: Svcd,
  sink: SinkClient,
  messages: number,
  publishRps: number,
  /** Called when the last publish is answered (the bench snapshots thread CPU there). */
  onPublished?: () => void,
): Promise<DeliveryRun> {
  await sink.reset();
  const publishSeconds = messages / Math.max(500, publishRps);
  const notBefore = Math.ceil((Date.now() + publishSeconds * 1500 + 1500) / 1000);
  const spec = {
    url: svcd.publishUrl(`${sink.url}/delivery`),
    method: "POST",
    headers: { ...svcd.auth, ...BODY_HEADERS, "svc-not-before": String(notBefore) },
    body: BODY,
  };
  const publish = await closedLoop({ request: () => spec, connections: BENCH.connections, requests: messages });
  const publishEnd = wallNow();
  onPublished?.();
  const arrivedDuringPublish = (await sink.stats()).count;
  const timeoutMs = Math.max(0, notBefore * 1000 - Date.now()) + 120_000;
  const stats = await sink.waitForCount(publish.ok, timeoutMs);
  // Normally nothing arrives before the publishing ends. If the machine was so slow that the
  // due time passed first, only the arrivals after the last publish answer are counted: from
  // then on the dispatcher drains a table of due messages, which is what this measures.
  const start = arrivedDuringPublish === 0 ? stats.firstAt : publishEnd;
  const delivered = stats.count - arrivedDuringPublish;
  if (delivered <= 0)
    throw new Error(`delivery: all ${stats.count} messages fell due and arrived while publishing (at ${Math.round(publish.rps)}/s, ` +
      `slower than the ${Math.round(publishRps)}/s the wait was sized for): nothing left to measure`);
  const seconds = (stats.lastAt - start) / 1000;
  return { messages, publish, arrivedDuringPublish, delivered, seconds, perSecond: delivered / seconds };
}

/** The baseline: plain POSTs to the same sink, at each concurrency; the fastest run counts. */
export async function plainFetchRun(sink: SinkClient, messages: number): Promise<LoadResult & { concurrency: number; runs: string }> {
  const spec = { url: `${sink.url}/plain`, method: "POST", headers: BODY_HEADERS, body: BODY };
  let best: (LoadResult & { concurrency: number }) | undefined;
  const runs: string[] = [];
  for (const concurrency of DELIVERY_CONCURRENCY) {
    await sink.reset();
    const cpu = process.cpuUsage();
    const run = await closedLoop({ request: () => spec, connections: concurrency, requests: messages });
    const used = process.cpuUsage(cpu);
    const perRequest = (used.user + used.system) / Math.max(1, run.total);
    runs.push(`${Math.round(run.rps).toLocaleString("en-US")} at ${concurrency} (${Math.round(perRequest)} µs CPU each)`);
    if (!best || run.rps > best.rps) best = { ...run, concurrency };
  }
  return { ...best!, runs: runs.join(", ") };
}

export interface DeliveryThroughput {
  baseline: LoadResult & { concurrency: number; runs: string };
  svcd: DeliveryRun;
  ratio: number;
}

export async function measureDelivery(
  svcd: Svcd,
  sink: SinkClient,
  publishRps: number,
  messages = BENCH.deliveryMessages,
  onPublished?: () => void,
) {
  const baseline = await plainFetchRun(sink, messages);
  const run = await deliveryRun(svcd, sink, messages, publishRps, onPublished);
  return { baseline, svcd: run, ratio: run.perSecond / baseline.rps } satisfies DeliveryThroughput;
}
