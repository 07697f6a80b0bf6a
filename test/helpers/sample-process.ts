import { spawn } from "node:child_process";
import { waitUntil } from "./wait.ts";

/** A documented sample running as its own process group (its `&` children included). */
export interface SampleProcess {
  /** The exit code of the sample's own process (its background children may live on). */
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Waits until stdout matches, or fails naming what the sample printed. */
  waitFor(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  /** Ends the whole group: the sample and whatever it started in the background. */
  stop(): void;
}

export function startSample(cmd: string[], opts: { cwd: string; env: Record<string, string> }): SampleProcess {
  const child = spawn(cmd[0]!, cmd.slice(1), {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  child.stderr!.on("data", (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => {
    child.on("exit", (code) => resolve(code));
    child.on("error", (e) => ((err += String(e)), resolve(null)));
  });
  return {
    exited,
    stdout: () => out,
    stderr: () => err,
    async waitFor(pattern, timeoutMs = 30_000) {
      const hit = () => (typeof pattern === "string" ? out.includes(pattern) : pattern.test(out));
      await waitUntil(hit, { timeoutMs, what: `${pattern} in the output of ${cmd.join(" ")}` }).catch((e: Error) => {
        throw new Error(`${e.message}; it printed:\n${out}\n${err}`);
      });
    },
    stop() {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

/** A free loopback port (closed again at once: the sample binds it). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Waits until something accepts TCP connections on the port (a sample's server is up). */
export async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  await waitUntil(
    () =>
      Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
        (socket) => (socket.end(), true),
        () => false,
      ),
    { timeoutMs, intervalMs: 25, what: `a server on port ${port}` },
  );
}

/**
 * An HTTP proxy that answers every plain request 200 and refuses every tunnel: the samples'
 * destinations (https://example.com/...) stay on this machine, and nothing reaches the internet.
 */
export function startSinkProxy() {
  const requests: string[] = [];
  const server = Bun.listen<{ buf: string }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buf: "" };
      },
      data(socket, chunk) {
        socket.data.buf += chunk.toString("latin1");
        if (!socket.data.buf.includes("\r\n\r\n")) return;
        const line = socket.data.buf.slice(0, socket.data.buf.indexOf("\r\n"));
        requests.push(line);
        socket.end(
          line.startsWith("CONNECT ")
            ? "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            : "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
        );
      },
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}
