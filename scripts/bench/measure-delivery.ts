/**
 * (2) End-to-end delivery throughput: N messages published (64 connections), all due at the same
 * second (Svc-Not-Before), then delivered by svcd to the sink; messages delivered per second at
 * the sink, first arrival to last. Baseline: the same generator sending N plain POSTs with the
 * same body straight to the same sink, at the concurrency svcd's deliveries can reach (Bun's
 * fetch runs at most 256 requests at once per process: BUN_CONFIG_MAX_HTTP_REQUESTS).
 */
import { BENCH } from "./config.ts";
import { closedLoop, wallNow, type LoadResult } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { SinkClient, Svcd } from "./procs.ts";

export const DELIVERY_CONCURRENCY = Number(process.env.BENCH_DELIVERY_CONCURRENCY ?? 256);

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
  const seconds = (stats.lastAt - start) / 1000;
  return { messages, publish, arrivedDuringPublish, delivered, seconds, perSecond: delivered / seconds };
}

/** The baseline: plain POSTs from the load generator to the same sink. */
export async function plainFetchRun(sink: SinkClient, messages: number): Promise<LoadResult> {
  await sink.reset();
  const spec = { url: `${sink.url}/plain`, method: "POST", headers: BODY_HEADERS, body: BODY };
  return closedLoop({ request: () => spec, connections: DELIVERY_CONCURRENCY, requests: messages });
}

export interface DeliveryThroughput {
  baseline: LoadResult;
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
