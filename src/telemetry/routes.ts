import { createHash, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import { HttpError } from "../core/errors.ts";
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
