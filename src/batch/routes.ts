import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { callerIp } from "../http/request.ts";
import { apiDoc, jsonContent } from "../openapi/doc.ts";
import { BatchAnswerJson } from "../messages/api-schemas.ts";
import { BatchElement, MAX_BATCH, type BatchService } from "./service.ts";
import { Type } from "@sinclair/typebox";

/** `POST /v2/batch`: a JSON array of messages; 200 with an answer array aligned with it. */
export function batchRoutes(ctx: AppContext, batch: BatchService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post("/v2/batch", ({ account, body, server, request }) => batch.publish(account, body, callerIp(server, request)), {
      // Elements are checked one by one, so one bad element does not refuse the others.
      body: t.Array(t.Unknown()),
      detail: apiDoc({
        summary: "Publish many messages (URLs, URL Groups, queues) in one request",
        requestBody: jsonContent(Type.Array(BatchElement, { maxItems: MAX_BATCH }), "the messages: each with its destination, its settings as headers, its body"),
        responses: { 200: jsonContent(BatchAnswerJson, "one answer per element") },
      }),
    });
}
