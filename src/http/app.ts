import type { HTMLBundle } from "bun";
import { Elysia, type ElysiaConfig } from "elysia";
import { withoutCredentials, type Logger } from "../core/log.ts";
import { installErrorHandling } from "./errors.ts";
import { fastRoutes, type FastRoute, type Intercept, type RequestObserver } from "./fast-route.ts";
import type { RoutePlugin } from "./plugin.ts";
import { dropNullFields } from "./null-means-unset.ts";

export type { FastRoute, Intercept, RequestObserver };

/** Routes Bun serves itself, before Elysia: bundled HTML pages (the console) and their assets. */
export type StaticRoutes = Record<string, HTMLBundle>;

/** Bun's own `routes`, as Elysia hands them to `Bun.serve`. */
type ServeRoutes = NonNullable<NonNullable<ElysiaConfig<string>["serve"]>["routes"]>;

/**
 * Builds one Elysia app from route plugins, with the global error mapping and one log line per
 * request. Only the path is logged, never the query string, so tokens never reach the logs.
 */
export function buildHttpApp(
  plugins: RoutePlugin[],
  log: Logger,
  staticRoutes: StaticRoutes = {},
  observe?: RequestObserver,
  fast: FastRoute[] = [],
  intercept?: Intercept,
): RoutePlugin {
  const started = new WeakMap<Request, number>();
  // Bodies and queries are checked exactly as their schemas say: an unknown field of a schema that
  // refuses them is an error, not silently dropped. `development: false` whatever NODE_ENV says:
  // pages are bundled once, minified and cached, the same under `bun src/main.ts` as in the
  // compiled binary (no hot reload, no dev-server socket).
  const routes: ServeRoutes = { ...staticRoutes, ...fastRoutes(fast, { log, observe, intercept, fallback: (request) => app.fetch(request) }) };
  const app: RoutePlugin = new Elysia({ normalize: false, serve: { development: false, routes } });
  installErrorHandling(app, log);
  if (intercept) app.onRequest(({ request }) => intercept(request));
  app.onTransform({ as: "global" }, (context) => {
    dropNullFields(context.body);
  });
  // Below info level, and without an observer, the hooks would time every request for nothing.
  const logRequests = log.enabled?.("info") ?? true;
  if (logRequests || observe) {
    app
      .onRequest(({ request }) => {
        started.set(request, performance.now());
      })
      .onAfterResponse({ as: "global" }, ({ request, set, path, responseValue, route }) => {
        const t0 = started.get(request);
        const elapsed = t0 === undefined ? 0 : performance.now() - t0;
        const status = responseValue instanceof Response ? responseValue.status : Number(set.status ?? 200);
        observe?.(request.method, route || "unmatched", status, elapsed / 1000);
        if (logRequests)
          log.info("request", { method: request.method, path: withoutCredentials(path), status, ms: Math.round(elapsed * 10) / 10 });
      });
  }
  for (const plugin of plugins) app.use(plugin);
  return app;
}
