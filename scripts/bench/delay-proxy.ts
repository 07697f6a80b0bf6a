/**
 * A TCP proxy that delays every chunk by `delayMs` each way, in order: a database "in another
 * zone" for the benchmark (PostgreSQL 2 × delayMs away from every system measured through it).
 *
 *   const proxy = startDelayProxy({ target: { host: "127.0.0.1", port: 5432 }, delayMs: 1 });
 *   // connect to 127.0.0.1:proxy.port instead; proxy.stop() at the end
 */
import type { Socket } from "bun";

interface Side {
  /** Chunks waiting for their delay, then for the other end to be ready. */
  queue: Array<{ at: number; data: Uint8Array }>;
  timer: ReturnType<typeof setTimeout> | null;
}

interface Pair {
  client: Socket<Pair>;
  server: Socket<Pair> | null;
  /** Towards the server, towards the client. */
  up: Side;
  down: Side;
  closed: boolean;
}

export interface DelayProxy {
  port: number;
  stop(): void;
}

export function startDelayProxy(o: { target: { host: string; port: number }; delayMs: number }): DelayProxy {
  const side = (): Side => ({ queue: [], timer: null });
  /** Sends what is due on one side, in order; arms a timer for the rest. */
  const pump = (pair: Pair, s: Side, to: Socket<Pair> | null) => {
    if (!to || pair.closed) return;
    const now = performance.now();
    while (s.queue.length > 0 && s.queue[0]!.at <= now) {
      const chunk = s.queue[0]!;
      const written = to.write(chunk.data);
      if (written < chunk.data.length) {
        // The other end is full: the rest goes on its drain.
        chunk.data = chunk.data.subarray(written);
        return;
      }
      s.queue.shift();
    }
    if (s.queue.length > 0 && !s.timer) {
      s.timer = setTimeout(() => {
        s.timer = null;
        pump(pair, s, to);
      }, Math.max(0, s.queue[0]!.at - now));
    }
  };
  const close = (pair: Pair) => {
    if (pair.closed) return;
    pair.closed = true;
    for (const s of [pair.up, pair.down]) if (s.timer) clearTimeout(s.timer);
    pair.client.end();
    pair.server?.end();
  };
  const delayed = (s: Side, data: Uint8Array) => s.queue.push({ at: performance.now() + o.delayMs, data: new Uint8Array(data) });

  const listener = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        const pair: Pair = { client, server: null, up: side(), down: side(), closed: false };
        client.data = pair;
        void Bun.connect<Pair>({
          hostname: o.target.host,
          port: o.target.port,
          data: pair,
          socket: {
            open(server) {
              pair.server = server;
              pump(pair, pair.up, server);
            },
            data(_server, data) {
              delayed(pair.down, data);
              pump(pair, pair.down, pair.client);
            },
            drain() {
              pump(pair, pair.up, pair.server);
            },
            close() {
              close(pair);
            },
            error() {
              close(pair);
            },
          },
        }).catch(() => close(pair));
      },
      data(client, data) {
        delayed(client.data.up, data);
        pump(client.data, client.data.up, client.data.server);
      },
      drain(client) {
        pump(client.data, client.data.down, client);
      },
      close(client) {
        close(client.data);
      },
      error(client) {
        close(client.data);
      },
    },
  });
  return { port: listener.port, stop: () => listener.stop(true) };
}

/**
 * As a process of its own (measure-remote.ts runs it so, apart from the bench's load generator):
 *   bun scripts/bench/delay-proxy.ts <target host> <target port> <delayMs>
 * prints "listening on tcp://127.0.0.1:<port>" and proxies until killed.
 */
if (import.meta.main) {
  const [host, port, delayMs] = process.argv.slice(2);
  if (!host || !port || !delayMs) throw new Error("usage: delay-proxy.ts <target host> <target port> <delayMs>");
  const proxy = startDelayProxy({ target: { host, port: Number(port) }, delayMs: Number(delayMs) });
  console.log(`listening on tcp://127.0.0.1:${proxy.port}`);
}
