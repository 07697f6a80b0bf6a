/**
 * (1) Publish throughput: POST /v2/publish/{sink} with a 1 KB body over 64 keep-alive connections,
 * against a bare Bun.serve answering fixed JSON: same generator, same body, same connections.
 * Every svcd 200 follows a committed write (group commit).
 *
 * Measured twice: with `Svc-Delay: 1h` (the publish path alone: the delivery pipeline stays idle,
 * this is the row the target applies to) and due at once (svcd delivers every message to the
 * sink while the load runs, on the same two cores).
 */
import { BENCH } from "./config.ts";
import { hammer, type LoadResult } from "./load.ts";
import { BODY, BODY_HEADERS } from "./payload.ts";
import type { Helper, Publishable } from "./procs.ts";

export interface PublishThroughput {
  bare: LoadResult;
  svcd: LoadResult;
  ratio: number;
}

/** svcd's side (reused by the backlog measurement). */
export async function publishLoad(svcd: Publishable, destination: string, extraHeaders: Record<string, string> = {}): Promise<LoadResult> {
  const spec = {
    url: svcd.publishUrl(destination),
    method: "POST",
    headers: { ...svcd.auth, ...BODY_HEADERS, ...extraHeaders },
    body: BODY,
  };
  return hammer(spec, {
    connections: BENCH.connections,
    durationMs: BENCH.publishSeconds * 1000,
    warmupMs: BENCH.warmupSeconds * 1000,
  });
}

/** Publishes whose messages wait an hour: nothing is delivered during the run. */
export const DELAYED = { "svc-delay": "1h" };

export async function bareLoad(bare: Helper): Promise<LoadResult> {
  const spec = { url: `${bare.url}/v2/publish/x`, method: "POST", headers: BODY_HEADERS, body: BODY };
  return hammer(spec, {
    connections: BENCH.connections,
    durationMs: BENCH.publishSeconds * 1000,
    warmupMs: BENCH.warmupSeconds * 1000,
  });
}
