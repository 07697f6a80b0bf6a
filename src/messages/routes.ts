import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { notFound } from "../core/errors.ts";
import type { Account } from "../accounts/accounts.ts";
import type { FastRoute } from "../http/app.ts";
import { authenticatePublishing, messagingAuth } from "../http/auth.ts";
import { readBodyLimited } from "../http/body.ts";
import { readBulkSelection } from "../filters/bulk.ts";
import { CANCEL_FILTERS, filterDocs } from "../filters/filter.ts";
import { apiDoc, bulkControls, filterBody, filterQuery, jsonContent, rawBody } from "../openapi/doc.ts";
import { CancelledJson, MessageJson, PublishAnswerJson } from "./api-schemas.ts";
import { settingParameters } from "./publish-headers.ts";
import { optionalJsonObject } from "../http/query.ts";
import { callerIp, rawAfter, type RequestServer } from "../http/request.ts";
import type { CancelService } from "./cancel.ts";
import { parseDestination } from "./destination.ts";
import type { PublishService } from "./publish.ts";
import type { MessageStorage } from "./storage.ts";
import { compact, messageView } from "./views.ts";

/** Most messages one bulk cancel acts on; more matches answer a cursor to continue with. */
const MAX_BULK_CANCEL = 10_000;

/** `POST /v2/publish/*` as Bun serves it before Elysia's router (the same answer as the route above). */
export function publishRoute(ctx: AppContext, publisher: PublishService): FastRoute {
  return {
    method: "POST",
    path: "/v2/publish/*",
    handle: (request, server) => publishAnswer(ctx, publisher, authenticatePublishing(ctx.accounts, ctx.dialect, request), request, server),
  };
}

function publishAnswer(ctx: AppContext, publisher: PublishService, account: Account, request: Request, server: RequestServer) {
  return publishTo(ctx, publisher, { account, request, server, rawDestination: rawAfter(request, "/v2/publish/") });
}

/**
 * Publishes a request's body to the destination in its raw path (a URL or a URL Group, with the
 * query keys that belong to it), into `queueName` when given: the answer of publish and enqueue.
 */
export async function publishTo(
  ctx: AppContext,
  publisher: PublishService,
  input: { account: Account; request: Request; server: RequestServer; rawDestination: string; queueName?: string },
): Promise<Response> {
  const { account, request } = input;
  const { destination, query } = parseDestination(input.rawDestination, ctx.dialect);
  const body = await readBodyLimited(request, account.limits.maxMessageSize);
  const result = await publisher.publish({
    account,
    destination,
    headers: request.headers,
    query,
    body,
    callerIp: callerIp(input.server, request),
    queueName: input.queueName,
  });
  return Response.json(result.body, { status: result.status });
}

export function messageRoutes(ctx: AppContext, publisher: PublishService, store: MessageStorage, cancels: CancelService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post("/v2/publish/*", ({ request, account, server }) => publishAnswer(ctx, publisher, account, request, server), {
      parse: "none",
      detail: apiDoc({
        summary: "Publish a message to a URL or a URL Group",
        parameters: settingParameters(ctx.dialect),
        requestBody: rawBody("the message body, delivered as is"),
        responses: {
          200: jsonContent(PublishAnswerJson, "stored: the message, or one per endpoint of a URL Group"),
          202: jsonContent(PublishAnswerJson, "every message was a duplicate"),
        },
      }),
    })
    .get(
      "/v2/messages/:messageId",
      async ({ account, params }) => {
        const m = await store.read(account.id, params.messageId);
        if (!m) throw notFound(`message ${params.messageId} not found`);
        return messageView(m);
      },
      {
        params: t.Object({ messageId: t.String() }),
        detail: apiDoc({ summary: "Get a pending message", responses: { 200: jsonContent(MessageJson, "the message") } }),
      },
    )
    .delete(
      "/v2/messages/:messageId",
      async ({ account, params }) => {
        if (!(await cancels.cancelOne(account.id, params.messageId)))
          throw notFound(`message ${params.messageId} not found or already finished`);
        return { cancelled: 1 };
      },
      {
        params: t.Object({ messageId: t.String() }),
        detail: apiDoc({ summary: "Cancel a message", responses: { 200: jsonContent(CancelledJson, "cancelled") } }),
      },
    )
    .delete(
      "/v2/messages",
      async ({ account, request }) => {
        const selection = readBulkSelection(new URL(request.url).searchParams, await optionalJsonObject(request), {
          accepts: CANCEL_FILTERS,
          tokenParam: ctx.dialect.tokenQueryParam,
          defaultCount: MAX_BULK_CANCEL,
          maxCount: MAX_BULK_CANCEL,
          ids: "messageIds",
        });
        return compact(await cancels.cancelMany(account.id, selection));
      },
      {
        parse: "none",
        detail: apiDoc({
          summary: "Cancel messages in bulk by ids or filters (oldest first, at most count)",
          parameters: [...filterQuery(filterDocs(CANCEL_FILTERS)), ...bulkControls(MAX_BULK_CANCEL)],
          requestBody: filterBody(filterDocs(CANCEL_FILTERS)),
          responses: { 200: jsonContent(CancelledJson, "how many were cancelled") },
        }),
      },
    );
}
