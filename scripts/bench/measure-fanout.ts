/**
 * (5) Fan-out: one publish to a URL Group of 100 endpoints, time from the publish until all 100
 * arrived, against 100 individual publishes sent at once to the same 100 URLs. Median of a few
 * rounds each. Skipped when the server has no URL Groups (the topics route answers 404).
 */
import { BENCH } from "./config.ts";
import { wallNow } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { SinkClient, Svcd } from "./procs.ts";
import { median } from "./stats.ts";

export type FanoutResult =
  | { available: false; reason: string }
  | { available: true; endpoints: number; groupMs: number; individualMs: number; ratio: number };

const GROUP = "bench-fanout";

export async function measureFanout(svcd: Svcd, sink: SinkClient, endpoints = BENCH.fanoutEndpoints, rounds = BENCH.fanoutRounds): Promise<FanoutResult> {
  const urls = Array.from({ length: endpoints }, (_, i) => `${sink.url}/fan/${i}`);
  const created = await fetch(`${svcd.url}/v2/topics/${GROUP}/endpoints`, {
    method: "POST",
    headers: { ...svcd.auth, "content-type": "application/json" },
    body: JSON.stringify({ endpoints: urls.map((url, i) => ({ url, name: `e${i}` })) }),
  });
  if (created.status === 404 || created.status === 405)
    return { available: false, reason: "URL Groups not available" };
  if (!created.ok) return { available: false, reason: `creating the group failed: HTTP ${created.status} ${await created.text()}` };

  const headers = { ...svcd.auth, ...BODY_HEADERS };
  const timeRound = async (publish: () => Promise<unknown>) => {
    await sink.reset();
    const t0 = wallNow();
    await publish();
    const stats = await sink.waitForCount(endpoints, 30_000);
    if (stats.count < endpoints) throw new Error(`fan-out: only ${stats.count} of ${endpoints} arrived`);
    return stats.lastAt - t0;
  };
  const group: number[] = [];
  const individual: number[] = [];
  for (let r = 0; r < rounds; r++) {
    group.push(await timeRound(async () => {
      const res = await fetch(svcd.publishUrl(GROUP), { method: "POST", headers, body: BODY });
      if (!res.ok) throw new Error(`group publish: HTTP ${res.status} ${await res.text()}`);
    }));
    individual.push(await timeRound(() =>
      Promise.all(urls.map(async (url) => {
        const res = await fetch(svcd.publishUrl(url), { method: "POST", headers, body: BODY });
        if (!res.ok) throw new Error(`publish: HTTP ${res.status}`);
        await res.arrayBuffer();
      })),
    ));
  }
  const groupMs = median(group);
  const individualMs = median(individual);
  return { available: true, endpoints, groupMs, individualMs, ratio: groupMs / individualMs };
}
