import { waitUntil } from "./wait.ts";

export interface ReceivedRequest {
  method: string;
  url: string;
  path: string;
  headers: Headers;
  body: Uint8Array;
  text: string;
  receivedAt: number;
}

export type ReceiverHandler = (req: ReceivedRequest, index: number) => Response | Promise<Response>;

/** A real HTTP server on a free loopback port that records every request it gets. */
export async function startReceiver(handler?: ReceiverHandler) {
  const received: ReceivedRequest[] = [];
  let current = handler;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const body = new Uint8Array(await request.arrayBuffer());
      const url = new URL(request.url);
      const entry: ReceivedRequest = {
        method: request.method,
        url: request.url,
        path: url.pathname + url.search,
        headers: request.headers,
        body,
        text: new TextDecoder().decode(body),
        receivedAt: Date.now(),
      };
      const index = received.push(entry) - 1;
      return current ? current(entry, index) : new Response("ok");
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    received,
    setHandler(next: ReceiverHandler | undefined) {
      current = next;
    },
    /** Waits until at least `count` requests (optionally matching) have arrived. */
    async waitFor(count: number, { timeoutMs = 10_000, match }: { timeoutMs?: number; match?: (r: ReceivedRequest) => boolean } = {}) {
      await waitUntil(() => (match ? received.filter(match) : received).length >= count, {
        timeoutMs,
        what: `${count} request(s) at ${url}`,
      });
      return match ? received.filter(match) : received;
    },
    stop: () => server.stop(true),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
