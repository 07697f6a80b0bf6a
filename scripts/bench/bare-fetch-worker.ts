/// <reference lib="webworker" />
/**
 * worker-jobs.ts --bare: the floor under a delivery worker. The same jobs as plain fetch POSTs
 * (headers as given, no signature, no timeout signal), the answer read with bytes(), and one
 * "outcomes" message per turn carrying only how many ended.
 */
export {};
declare const self: Worker;

let ended = 0;
function report(): void {
  if (++ended === 1)
    setImmediate(() => {
      self.postMessage({ type: "outcomes", n: ended });
      ended = 0;
    });
}

self.onmessage = (event: MessageEvent<{ type: string; jobs: { text: string; body: Uint8Array } }>) => {
  if (event.data.type !== "deliver") return;
  const { text, body } = event.data.jobs;
  for (const job of JSON.parse(text) as Array<{ url: string; method: string; headers: Array<[string, string]> }>) {
    void fetch(job.url, { method: job.method, headers: job.headers, body } as RequestInit)
      .then((r) => r.bytes())
      .catch(() => {})
      .then(report);
  }
};
