import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import { HttpError } from "../core/errors.ts";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import type { LiveEventStreams } from "./live-events.ts";
import type { ServerMetrics } from "./prometheus.ts";
import { apiDoc } from "../openapi/doc.ts";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * `GET /metrics` in the Prometheus text format. It needs `Authorization: Bearer <metrics token>`
 * (`--metrics-token`): its per-account series name every account, which no account's own token
 * may reveal, so an account token does not open it.
 */
export function metricsRoutes(metrics: ServerMetrics, metricsToken: string) {
  const expected = digest(metricsToken);
  return new Elysia().get(
    "/metrics",
    async ({ request }) => {
      const header = request.headers.get("authorization") ?? "";
      const given = /^bearer /i.test(header) ? header.slice(7).trim() : "";
      // Hashes have one length: the comparison takes the same time whatever was sent.
      if (!timingSafeEqual(digest(given), expected))
        throw new HttpError(401, "Unauthorized: /metrics takes the metrics token (--metrics-token)", { "www-authenticate": 'Bearer realm="svcd metrics"' });
      return new Response(await metrics.text(), { headers: { "content-type": metrics.contentType } });
    },
    {
      detail: apiDoc({
        summary: "Prometheus metrics (Bearer: the metrics token, not an account token)",
        security: [],
        responses: { 200: { description: "the Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } } },
      }),
    },
  );
}

/**
 * `GET /__svc/events`: the caller's message lifecycle as server-sent events, live (the console's
 * views refresh from it). Authenticated with the account's messaging token like the API.
 */
export function liveEventRoutes(ctx: AppContext, streams: LiveEventStreams) {
  return new Elysia().use(messagingAuth(ctx.accounts, ctx.dialect)).get(
    "/__svc/events",
    ({ account, request, server }) => {
      // The stream may stay quiet for long: the idle timeout must not end it.
      server?.timeout(request, 0);
      return streams.open(account.id, { userId: account.id });
    },
    {
      detail: apiDoc({
        summary: "The caller's message events (created, claimed, delivered, retried, failed, cancelled) as server-sent events",
        responses: { 200: { description: "text/event-stream; each event's data is JSON", content: { "text/event-stream": { schema: { type: "string" } } } } },
      }),
    },
  );
}
