import { Client as QStashClient, Receiver } from "@upstash/qstash";
import { Client as WorkflowClient, serve, type RouteFunction, type WorkflowServeOptions } from "@upstash/workflow";
import { advance, flush } from "./control.ts";
import { startTestServer, type TestServerOptions } from "./server.ts";

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * A real svcd in the hosted dialect, the official workflow SDK's `Client`, and a local `Bun.serve`
 * app serving workflows with the SDK's `serve` (signatures verified with the account's keys), as
 * a user's app and test would have them.
 */
export async function startWorkflowWorld(opts: TestServerOptions & { token?: string } = {}) {
  const svc = await startTestServer({ ...opts, config: { dialect: "upstash", ...opts.config } });
  const token = opts.token ?? svc.token;
  const keys = (await (await svc.api("/v2/keys")).json()) as { current: string; next: string };
  const qstash = new QStashClient({ baseUrl: svc.url, token, retry: false });
  const client = new WorkflowClient({ baseUrl: svc.url, token, retry: false });
  const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  const routes = new Map<string, Handler>();
  const app = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch(request) {
      const handler = routes.get(new URL(request.url).pathname);
      return handler ? handler(request) : new Response("no such route", { status: 404 });
    },
  });
  const base = `http://127.0.0.1:${app.port}`;

  return {
    svc,
    client,
    qstash,
    keys,
    receiver,
    base,
    /** Serves a workflow at `path` with the SDK's `serve`; returns its URL. */
    serve<T = unknown, R = unknown>(path: string, fn: RouteFunction<T, R>, options: WorkflowServeOptions<T, R> = {}): string {
      const { handler } = serve<T, Request, Response, R>(fn, { qstashClient: qstash, receiver, env: {}, ...options } as WorkflowServeOptions<T, R>);
      routes.set(path, handler);
      return base + path;
    },
    /** The handler served at `path` (to wrap it). */
    routeHandler(path: string): Handler | undefined {
      return routes.get(path);
    },
    /** Serves a plain endpoint at `path`; returns its URL. */
    route(path: string, handler: Handler): string {
      routes.set(path, handler);
      return base + path;
    },
    flush: () => flush(svc.api, { timeoutMs: 20_000 }),
    /** The server clock's time (the manual clock's, when it runs on one). */
    now: async () => ((await (await svc.api("/__svc/clock")).json()) as { now: number }).now,
    advance: (ms: number) => advance(svc.api, { ms }, { flush: true }),
    /** The run's log entry as `client.logs()` returns it. */
    async run(workflowRunId: string) {
      const { runs } = await client.logs({ workflowRunId });
      return runs[0];
    },
    async stop() {
      app.stop(true);
      await svc.stop();
    },
  };
}

export type WorkflowWorld = Awaited<ReturnType<typeof startWorkflowWorld>>;
