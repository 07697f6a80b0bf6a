/**
 * (3) Latency at a steady rate (open loop, default 1,000/s): publish → arrival at the sink, against
 * a raw HTTP round trip from the same generator to the same sink. Both carry the 1 KB body.
 * Publish latency is stamped with the cross-process wall clock on both sides (stats.ts wallNow).
 */
import { BENCH } from "./config.ts";
import { openLoop, wallNow } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { SinkClient, Svcd } from "./procs.ts";
import { percentile } from "./stats.ts";

export interface LatencyResult {
  rate: number;
  raw: { p50: number; p99: number; samples: number };
  svcd: { p50: number; p99: number; samples: number; lost: number };
}

export async function measureLatency(svcd: Svcd, sink: SinkClient, rate = BENCH.latencyRate, seconds = BENCH.latencySeconds): Promise<LatencyResult> {
  // Raw round trip: send, wait for the answer, both stamps in this process.
  const rawTimes: number[] = [];
  await openLoop({
    rate,
    seconds,
    send: async (i) => {
      const t0 = performance.now();
      const res = await fetch(`${sink.url}/raw`, { method: "POST", headers: { ...BODY_HEADERS, "x-bench-id": `raw-${i}` }, body: BODY });
      await res.arrayBuffer();
      rawTimes.push(performance.now() - t0);
    },
  });

  // Publish → arrival: the send stamp here, the arrival stamp in the sink.
  await sink.reset();
  const sentAt = new Map<string, number>();
  const headers = { ...svcd.auth, ...BODY_HEADERS };
  const url = svcd.publishUrl(`${sink.url}/latency`);
  await openLoop({
    rate,
    seconds,
    send: async () => {
      const t0 = wallNow();
      const res = await fetch(url, { method: "POST", headers, body: BODY });
      const { messageId } = (await res.json()) as { messageId: string };
      sentAt.set(messageId, t0);
    },
  });
  await sink.waitForCount(sentAt.size, 30_000);
  const arrivals = await sink.arrivals();
  const latencies: number[] = [];
  let lost = 0;
  for (const [id, t0] of sentAt) {
    const at = arrivals.get(id);
    if (at === undefined) lost++;
    else latencies.push(at - t0);
  }
  return {
    rate,
    raw: { p50: percentile(rawTimes, 50), p99: percentile(rawTimes, 99), samples: rawTimes.length },
    svcd: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), samples: latencies.length, lost },
  };
}
