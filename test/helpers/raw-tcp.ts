import type { Socket } from "bun";

/**
 * Raw TCP on loopback, for what fetch and Bun.serve refuse to do: receivers that misbehave at the
 * socket level, and requests carrying bytes no HTTP client would send.
 */

export interface TcpReceiver {
  url: string;
  port: number;
  /** Connections accepted so far. */
  connections: () => number;
  /** Bytes of request data received so far, over all connections. */
  bytesIn: () => number;
  stop(): void;
}

/**
 * A TCP server on a free loopback port; `onData` decides what happens to each chunk a client
 * sends (answer, close, reset, or nothing at all).
 */
export function startTcpReceiver(onData: (socket: Socket<{ id: number }>, data: Buffer) => void): TcpReceiver {
  let connections = 0;
  let bytesIn = 0;
  const server = Bun.listen<{ id: number }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { id: ++connections };
      },
      data(socket, data) {
        bytesIn += data.length;
        onData(socket, data);
      },
      error() {},
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    connections: () => connections,
    bytesIn: () => bytesIn,
    stop: () => server.stop(true),
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte sent to the end of the answer. */
  ms: number;
}

/** Parses the first HTTP/1.1 answer in `text` (Content-Length or chunked); null when incomplete. */
export function parseRawResponse(raw: Buffer): Omit<RawResponse, "ms"> | null {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const head = raw.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = raw.subarray(end + 4);
  if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf("\r\n");
      if (lineEnd < 0) return null;
      const size = parseInt(rest.subarray(0, lineEnd).toString("latin1"), 16);
      if (Number.isNaN(size)) return null;
      if (size === 0) break;
      if (rest.length < lineEnd + 2 + size + 2) return null;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    return { status, headers, body: Buffer.concat(parts).toString("utf8") };
  }
  const length = Number(headers["content-length"] ?? 0);
  if (rest.length < length) return null;
  return { status, headers, body: rest.subarray(0, length).toString("utf8") };
}

/**
 * Sends `request` (raw bytes, header block included) and resolves with the first answer, or
 * rejects at the deadline. `trickle` keeps sending more bytes after the request until the answer
 * arrives: a body that never ends, to prove the server answers without reading it all.
 */
export function rawRequest(
  port: number,
  request: string | Uint8Array,
  opts: { timeoutMs?: number; trickle?: () => Uint8Array | null } = {},
): Promise<RawResponse & { bytesSent: number }> {
  const started = performance.now();
  let received = Buffer.alloc(0);
  let bytesSent = 0;
  let done = false;
  return new Promise((resolve, reject) => {
    let socketRef: Socket<undefined> | undefined;
    const timer = setTimeout(() => {
      done = true;
      socketRef?.end();
      reject(new Error(`no answer within ${opts.timeoutMs ?? 10_000} ms (got ${received.length} bytes)`));
    }, opts.timeoutMs ?? 10_000);
    const finish = (closed: boolean) => {
      if (done) return;
      const parsed = parseRawResponse(received);
      if (!parsed) {
        if (closed) {
          done = true;
          clearTimeout(timer);
          reject(new Error(`connection closed before a full answer: ${JSON.stringify(received.toString("latin1").slice(0, 300))}`));
        }
        return;
      }
      done = true;
      clearTimeout(timer);
      socketRef?.end();
      resolve({ ...parsed, ms: performance.now() - started, bytesSent });
    };
    const pump = (socket: Socket<undefined>) => {
      if (!opts.trickle) return;
      const step = () => {
        if (done) return;
        const chunk = opts.trickle!();
        if (!chunk) return;
        const written = socket.write(chunk);
        bytesSent += written;
        if (written < 0) return;
        setTimeout(step, 0);
      };
      step();
    };
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(socket) {
          socketRef = socket;
          const bytes = typeof request === "string" ? Buffer.from(request, "latin1") : request;
          let offset = 0;
          // Large requests (10,000 headers) do not fit one write: keep writing as the socket drains.
          const writeMore = () => {
            while (offset < bytes.length) {
              const n = socket.write(bytes.subarray(offset));
              if (n <= 0) return;
              offset += n;
              bytesSent += n;
            }
            pump(socket);
          };
          (socket as unknown as { _writeMore: () => void })._writeMore = writeMore;
          writeMore();
        },
        drain(socket) {
          (socket as unknown as { _writeMore?: () => void })._writeMore?.();
        },
        data(_socket, data) {
          received = Buffer.concat([received, data]);
          finish(false);
        },
        close() {
          finish(true);
        },
        error(_socket, error) {
          if (!done) {
            done = true;
            clearTimeout(timer);
            reject(error);
          }
        },
      },
    }).catch(reject);
  });
}

export interface TcpProxy {
  port: number;
  /** The local ports of the proxy's connections to the target (PostgreSQL's `client_port`). */
  upstreamPorts(): number[];
  /**
   * Stops passing bytes either way on the connection whose upstream local port is `port`, its
   * sockets left open: a connection gone silently dead, as behind a firewall that drops it.
   */
  freeze(port: number): void;
  /** What the target sent on frozen connections and the proxy dropped, as text. */
  dropped(): string;
  stop(): void;
}

/** A TCP proxy on a free loopback port to `targetPort` on loopback, whose connections can be frozen. */
export function startTcpProxy(targetPort: number): TcpProxy {
  type Side = { up: Socket<unknown> | null; pending: Uint8Array[]; upPort: number };
  const frozen = new Set<number>();
  const live = new Set<number>();
  let dropped = "";
  const server = Bun.listen<Side>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { up: null, pending: [], upPort: 0 };
        void Bun.connect({
          hostname: "127.0.0.1",
          port: targetPort,
          socket: {
            open(up) {
              client.data.up = up;
              client.data.upPort = up.localPort;
              live.add(up.localPort);
              for (const chunk of client.data.pending) up.write(chunk);
            },
            data(up, chunk) {
              if (frozen.has(up.localPort)) dropped += chunk.toString("latin1");
              else client.write(chunk);
            },
            close(up) {
              live.delete(up.localPort);
              client.end();
            },
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        const { up, upPort } = client.data;
        if (!up) client.data.pending.push(new Uint8Array(chunk));
        else if (!frozen.has(upPort)) up.write(chunk);
      },
      close(client) {
        client.data.up?.end();
      },
    },
  });
  return {
    port: server.port,
    upstreamPorts: () => [...live],
    freeze: (port) => void frozen.add(port),
    dropped: () => dropped,
    stop: () => server.stop(true),
  };
}
