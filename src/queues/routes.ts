import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { badRequest } from "../core/errors.ts";
import type { Account } from "../accounts/accounts.ts";
import type { FastRoute } from "../http/app.ts";
import { authenticatePublishing, messagingAuth } from "../http/auth.ts";
import type { PublishService } from "../messages/publish.ts";
import { publishTo } from "../messages/routes.ts";
import { rawAfter, type RequestServer } from "../http/request.ts";
import type { Write } from "../store/transactor.ts";
import type { QueueService } from "./service.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent, rawBody } from "../openapi/doc.ts";
import { EMPTY_OK, PublishAnswerJson, QueueJson } from "../messages/api-schemas.ts";
import { settingParameters } from "../messages/publish-headers.ts";

const QueueParams = t.Object({ name: t.String() });
const QueueBody = t.Object({
  queueName: t.String(),
  parallelism: t.Optional(t.Integer()),
  paused: t.Optional(t.Boolean()),
});

/** `/v2/queues` and `POST /v2/enqueue/{queue}/{destination}` (docs/messaging-api.md, Queues). */
export function queueRoutes(ctx: AppContext, queues: QueueService, publisher: PublishService) {
  const write = (fn: Write<void>) => ctx.commit.run(fn).then(() => new Response(null, { status: 200 }));
  const now = () => ctx.clock.now();
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post("/v2/queues", ({ account, body }) => write((tx) => queues.upsert(tx, account, body, now())), {
      body: QueueBody,
      detail: apiDoc({ summary: "Create or update a queue", responses: { 200: EMPTY_OK } }),
    })
    .get("/v2/queues", ({ account }) => queues.list(account), { detail: apiDoc({ summary: "List queues", responses: { 200: jsonContent(Type.Array(QueueJson), "every queue") } }) })
    .get("/v2/queues/:name", ({ account, params }) => queues.get(account, params.name), {
      params: QueueParams,
      detail: apiDoc({ summary: "Get a queue", responses: { 200: jsonContent(QueueJson, "the queue") } }),
    })
    .delete("/v2/queues/:name", ({ account, params }) => write((tx) => queues.delete(tx, account, params.name, now())), {
      params: QueueParams,
      detail: apiDoc({ summary: "Delete a queue and cancel its messages", responses: { 200: EMPTY_OK } }),
    })
    .post(
      "/v2/queues/:name/pause",
      ({ account, params }) => write((tx) => queues.setPaused(tx, account, params.name, true, now())),
      { params: QueueParams, detail: apiDoc({ summary: "Pause a queue", responses: { 200: EMPTY_OK } }) },
    )
    .post(
      "/v2/queues/:name/resume",
      ({ account, params }) => write((tx) => queues.setPaused(tx, account, params.name, false, now())),
      { params: QueueParams, detail: apiDoc({ summary: "Resume a queue", responses: { 200: EMPTY_OK } }) },
    )
    .post("/v2/enqueue/*", ({ request, account, server }) => enqueueAnswer(ctx, queues, publisher, account, request, server), {
      parse: "none",
      detail: apiDoc({
        summary: "Publish a message into a queue (created if missing)",
        parameters: settingParameters(ctx.dialect),
        requestBody: rawBody("the message body, delivered as is"),
        responses: { 200: jsonContent(PublishAnswerJson, "stored"), 202: jsonContent(PublishAnswerJson, "a duplicate") },
      }),
    });
}

/** `POST /v2/enqueue/*` as Bun serves it before Elysia's router (the same answer as the route above). */
export function enqueueRoute(ctx: AppContext, queues: QueueService, publisher: PublishService): FastRoute {
  return {
    method: "POST",
    path: "/v2/enqueue/*",
    handle: (request, server) =>
      enqueueAnswer(ctx, queues, publisher, authenticatePublishing(ctx.accounts, ctx.dialect, request), request, server),
  };
}

async function enqueueAnswer(
  ctx: AppContext,
  queues: QueueService,
  publisher: PublishService,
  account: Account,
  request: Request,
  server: RequestServer,
) {
  const rest = rawAfter(request, "/v2/enqueue/");
  const slash = rest.indexOf("/");
  if (slash <= 0) throw badRequest("invalid enqueue path: expected /v2/enqueue/{queue}/{destination}");
  const queueName = decodeName(rest.slice(0, slash));
  await queues.checkCanUse(null, account, queueName);
  return publishTo(ctx, publisher, { account, request, server, rawDestination: rest.slice(slash + 1), queueName });
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`invalid queue name "${raw.slice(0, 140)}"`);
  }
}
