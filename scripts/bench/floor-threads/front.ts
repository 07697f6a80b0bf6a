/// <reference lib="webworker" />
/** A front of the threaded durable floor (writer.ts): HTTP in, bodies to the writer, ids back. */
declare const self: Worker;

export type ToFront = { type: "listen"; port: number } | { type: "stored"; tags: number[]; ids: string[] };
export type FromFront =
  | { type: "listening"; port: number }
  | { type: "store"; tags: number[]; urls: string[]; bodies: Uint8Array[] };

const PREFIX = "/v2/publish/";
const waiting = new Map<number, (id: string) => void>();
let nextTag = 0;
let batch: Extract<FromFront, { type: "store" }> = { type: "store", tags: [], urls: [], bodies: [] };

/** One message to the writer per turn of this thread's event loop. */
function send() {
  self.postMessage(batch);
  batch = { type: "store", tags: [], urls: [], bodies: [] };
}

function listen(port: number) {
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    reusePort: true,
    idleTimeout: 0,
    async fetch(request) {
      const path = request.url.slice(request.url.indexOf("/", 8));
      if (!path.startsWith(PREFIX)) return new Response("not found", { status: 404 });
      const url = path.slice(PREFIX.length);
      const body = new Uint8Array(await request.arrayBuffer());
      const tag = nextTag++;
      if (batch.tags.push(tag) === 1) setImmediate(send);
      batch.urls.push(url);
      batch.bodies.push(body);
      const id = await new Promise<string>((stored) => waiting.set(tag, stored));
      return new Response(JSON.stringify({ messageId: id, url }), { headers: { "content-type": "application/json" } });
    },
  });
  self.postMessage({ type: "listening", port: server.port! } satisfies FromFront);
}

self.onmessage = (event: MessageEvent<ToFront>) => {
  const msg = event.data;
  if (msg.type === "listen") return listen(msg.port);
  msg.tags.forEach((tag, i) => {
    waiting.get(tag)!(msg.ids[i]!);
    waiting.delete(tag);
  });
};
