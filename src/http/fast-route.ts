import type { Server } from "bun";
import { withoutCredentials, type Logger } from "../core/log.ts";
import { errorResponse } from "./errors.ts";

/**
 * A route Bun's own router serves before Elysia's, for the hottest requests (publish, enqueue):
 * Elysia's routing, hooks and context cost about as much as storing the message. The same path
 * stays declared in Elysia (OpenAPI, 405 for other methods); both call the same handler, which
 * does its own authentication and throws what Elysia's routes throw.
 */
export interface FastRoute {
  method: "POST";
  /** Bun's route pattern (`/v2/publish/*`); also the route label of the request metrics. */
  path: string;
  handle(request: Request, server: Server<unknown>): Promise<Response>;
}

/** Told of every answered request: the route pattern it matched (`unmatched` when none). */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

type Fallback = (request: Request) => Response | Promise<Response>;

/**
 * Asked before a request is routed: an answer to give instead (an injected fault), or undefined to
 * go on. Undefined, not a promise, when it has nothing to do, so the hot path awaits nothing.
 */
export type Intercept = (request: Request) => Promise<Response | undefined> | undefined;

/**
 * Bun `routes` for the fast routes, with what Elysia's app adds to every request: the error mapping,
 * the request metrics and the log line (at info level).
 */
export function fastRoutes(
  routes: FastRoute[],
  opts: { log: Logger; observe?: RequestObserver; fallback: Fallback; intercept?: Intercept },
): Record<string, Record<string, (request: Request, server: Server<unknown>) => Promise<Response>>> {
  const { log, observe, fallback, intercept } = opts;
  const logRequests = log.enabled?.("info") ?? true;
  const timed = logRequests || observe !== undefined;
  const out: ReturnType<typeof fastRoutes> = {};
  for (const route of routes) {
    const prefix = route.path.endsWith("*") ? route.path.slice(0, -1) : route.path;
    out[route.path] = {
      [route.method]: async (request, server) => {
        // Bun's router matches the raw path, while the URL is normalised: `/v2/publish/../x`
        // arrives here as `/v2/x`, which is not this route; Elysia answers it as before.
        const path = pathOf(request.url);
        if (!path.startsWith(prefix)) return fallback(request);
        const t0 = timed ? performance.now() : 0;
        let response: Response;
        try {
          const pending = intercept?.(request);
          response = (pending && (await pending)) || (await route.handle(request, server));
        } catch (error) {
          response = errorResponse(error, path, log);
        }
        if (timed) {
          const elapsed = performance.now() - t0;
          observe?.(request.method, route.path, response.status, elapsed / 1000);
          if (logRequests)
            log.info("request", { method: request.method, path: withoutCredentials(path), status: response.status, ms: Math.round(elapsed * 10) / 10 });
        }
        return response;
      },
    };
  }
  return out;
}

/** The path of an absolute request URL, without its query. */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}
