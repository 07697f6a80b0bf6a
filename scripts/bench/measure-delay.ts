/**
 * (8) Delay accuracy: messages published with `Svc-Delay: 2s` over about two seconds; for each,
 * arrival at the sink minus its notBefore (read back with GET /v2/messages/{id} while pending).
 */
import { BENCH } from "./config.ts";
import { openLoop } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { SinkClient, Svcd } from "./procs.ts";
import { percentile } from "./stats.ts";

export interface DelayAccuracy {
  messages: number;
  p50: number;
  p99: number;
  max: number;
  /** Arrivals before notBefore (must be 0). */
  early: number;
  lost: number;
}

export async function measureDelay(svcd: Svcd, sink: SinkClient, messages = BENCH.delayMessages): Promise<DelayAccuracy> {
  await sink.reset();
  const notBefore = new Map<string, number>();
  const url = svcd.publishUrl(`${sink.url}/delay`);
  const headers = { ...svcd.auth, ...BODY_HEADERS, "svc-delay": "2s" };
  await openLoop({
    rate: messages / 2,
    seconds: 2,
    send: async () => {
      const res = await fetch(url, { method: "POST", headers, body: BODY });
      const { messageId } = (await res.json()) as { messageId: string };
      const view = (await (await fetch(`${svcd.url}/v2/messages/${messageId}`, { headers: svcd.auth })).json()) as { notBefore: number };
      notBefore.set(messageId, view.notBefore);
    },
  });
  await sink.waitForCount(notBefore.size, 15_000);
  const arrivals = await sink.arrivals();
  const lateness: number[] = [];
  let early = 0;
  let lost = 0;
  for (const [id, nb] of notBefore) {
    const at = arrivals.get(id);
    if (at === undefined) {
      lost++;
      continue;
    }
    if (at < nb) early++;
    lateness.push(at - nb);
  }
  return {
    messages: notBefore.size,
    p50: percentile(lateness, 50),
    p99: percentile(lateness, 99),
    max: Math.max(...lateness),
    early,
    lost,
  };
}
