import type { RoutePlugin } from "./plugin.ts";
import { StartError } from "../core/start-error.ts";


/**
 * Binds one listener, or fails the start with a line naming the port or host. Port sharing stays
 * off (Elysia turns it on by default): a second svcd on a busy port must fail, not answer half of
 * its requests with another database.
 */
export function listen(app: RoutePlugin, opts: { port: number; host: string; flag: string }): void {
  try {
    app.listen({ port: opts.port, hostname: opts.host, reusePort: false });
  } catch (error) {
    throw new StartError(bindFailure(error, opts));
  }
}

function bindFailure(error: unknown, { port, host, flag }: { port: number; host: string; flag: string }): string {
  const code = (error as { code?: string })?.code;
  switch (code) {
    case "EADDRINUSE":
      return `${flag} ${port}: the port is already in use on ${host} (another svcd?); stop that process or choose another port with ${flag}`;
    case "EACCES":
    case "EPERM":
      return `${flag} ${port}: permission denied to listen on ${host}:${port} (ports below 1024 need privileges); choose a port above 1023`;
    case "EADDRNOTAVAIL":
      return `--host ${host}: not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its own addresses`;
    case "ENOTFOUND":
    case "EAI_NONAME":
      return `--host ${host}: cannot be resolved to an address; use an IP address such as 127.0.0.1 or 0.0.0.0`;
    default:
      return `${flag} ${port}: cannot listen on ${host}:${port}: ${String((error as Error)?.message ?? error)}`;
  }
}
