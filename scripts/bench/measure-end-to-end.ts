/**
 * (2b) End to end with publishing and delivering at the same time: N messages, each due at once,
 * published by 64 connections (the closed-loop generator, count mode) while svcd delivers them to
 * the sink; messages per second from the first publish to the last arrival. The baseline is the
 * plain fetch loop of row 2 (the same N plain POSTs straight to the same sink).
 */
import { BENCH } from "./config.ts";
import { hammer, wallNow, type LoadResult } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { Publishable, SinkClient } from "./procs.ts";

export interface EndToEndRun {
  messages: number;
  publish: LoadResult;
  /** Arrivals at the sink (the generator may publish a few more than `messages` in count mode). */
  delivered: number;
  seconds: number;
  perSecond: number;
}

export async function endToEndRun(svcd: Publishable, sink: SinkClient, messages = BENCH.deliveryMessages): Promise<EndToEndRun> {
  await sink.reset();
  const spec = { url: svcd.publishUrl(`${sink.url}/e2e`), method: "POST", headers: { ...svcd.auth, ...BODY_HEADERS }, body: BODY };
  const t0 = wallNow();
  const publish = await hammer(spec, { connections: BENCH.connections, requests: messages });
  if (publish.ok === 0) throw new Error(`end to end: no publish accepted (${publish.firstError})`);
  await sink.waitForCount(publish.ok, 180_000);
  const stats = await sink.waitUntilQuiet(500, 60_000);
  if (stats.count < publish.ok) throw new Error(`end to end: ${stats.count} of ${publish.ok} messages arrived`);
  const seconds = (stats.lastAt - t0) / 1000;
  return { messages, publish, delivered: stats.count, seconds, perSecond: stats.count / seconds };
}
