/// <reference lib="webworker" />
/**
 * A delivery worker thread: makes the HTTP requests and reports each outcome. It never touches
 * SQLite; the dispatcher on the main thread records every outcome.
 */
import { signDelivery } from "../signing/jwt.ts";
import { performRequest } from "./http-attempt.ts";
import type { DeliveryJob, ToWorker } from "./worker-protocol.ts";

declare const self: Worker;

let workerId = -1;
let clockOffsetMs = 0;
const now = () => Date.now() + clockOffsetMs;

async function deliver(job: DeliveryJob) {
  const startedAt = now();
  const t0 = performance.now();
  const headers = new Headers(job.headers);
  headers.set(
    job.signatureHeader,
    signDelivery({ key: job.signingKey, issuer: job.issuer, url: job.url, body: job.body, nowMs: startedAt }),
  );
  const result = await performRequest({
    url: job.url,
    method: job.method,
    headers,
    body: job.body,
    timeoutMs: job.timeoutMs,
    maxResponseBytes: job.maxResponseBytes,
  });
  self.postMessage({
    type: "outcome",
    outcome: { ticket: job.ticket, messageId: job.messageId, startedAt, durationMs: performance.now() - t0, ...result },
  });
}

self.onmessage = (event: MessageEvent<ToWorker | { type: "hello"; workerId: number }>) => {
  const msg = event.data;
  switch (msg.type) {
    case "hello":
      workerId = msg.workerId;
      break;
    case "deliver":
      void deliver(msg.job);
      break;
    case "ping":
      self.postMessage({ type: "pong", id: msg.id, workerId });
      break;
    case "clock":
      clockOffsetMs = msg.nowMs - Date.now();
      break;
    case "crash":
      // Fault drill: die with the attempts in flight, as an out-of-memory or a native fault would.
      if (msg.how === "exit") process.exit(70);
      setTimeout(() => {
        throw new Error("delivery worker crash drill");
      });
      break;
  }
};
