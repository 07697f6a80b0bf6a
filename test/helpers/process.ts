import type { Subprocess } from "bun";

export const BUN = process.execPath;
export const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/** Starts svcd as a child process and waits for its "listening on" line. */
export async function spawnServer(cmd: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<ServerProcess> {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk);
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  // A deadline for a hang, not a speed: a loaded 2-core machine took over 15 s to start one.
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let url: string | undefined;
  while (!url) {
    url = /listening on (http:\/\/[^\s]+)/.exec(text)?.[1];
    if (url) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server did not start (exit ${proc.exitCode}):\n${text}`);
    }
    await Bun.sleep(10);
  }
  return {
    proc,
    url,
    output: () => text,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return await proc.exited;
    },
  };
}
