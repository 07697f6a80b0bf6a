import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { notFound } from "../core/errors.ts";
import { messagingAuth } from "../http/auth.ts";
import { readBodyLimited } from "../http/body.ts";
import { commonFilters, optionalInt, optionalJsonObject, optionalStringArray, queryList } from "../http/query.ts";
import type { CancelService } from "./cancel.ts";
import { parseDestination } from "./destination.ts";
import type { PublishService } from "./publish.ts";
import type { MessageStore } from "./store.ts";
import { messageView } from "./views.ts";

/** Everything after `marker` in the raw request URL, before any normalisation. */
export function rawAfter(request: Request, marker: string): string {
  const at = request.url.indexOf(marker);
  return at < 0 ? "" : request.url.slice(at + marker.length);
}

export function callerIp(server: { requestIP(r: Request): { address: string } | null } | null, request: Request) {
  return server?.requestIP(request)?.address;
}

export function messageRoutes(ctx: AppContext, publisher: PublishService, store: MessageStore, cancels: CancelService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post(
      "/v2/publish/*",
      async ({ request, account, server, set }) => {
        const { destination, query } = parseDestination(rawAfter(request, "/v2/publish/"), ctx.dialect);
        const body = await readBodyLimited(request, account.limits.maxMessageSize);
        const result = await publisher.publish({
          account,
          destination,
          headers: request.headers,
          query,
          body,
          callerIp: callerIp(server, request),
        });
        set.status = result.status;
        return result.body;
      },
      { parse: "none", detail: { summary: "Publish a message to a URL or a URL Group" } },
    )
    .get(
      "/v2/messages/:messageId",
      ({ account, params }) => {
        const m = store.get(account.id, params.messageId);
        if (!m) throw notFound(`message ${params.messageId} not found`);
        return messageView(m);
      },
      { params: t.Object({ messageId: t.String() }), detail: { summary: "Get a pending message" } },
    )
    .delete(
      "/v2/messages/:messageId",
      async ({ account, params }) => {
        if (!(await cancels.cancelOne(account.id, params.messageId)))
          throw notFound(`message ${params.messageId} not found or already finished`);
        return { cancelled: 1 };
      },
      { params: t.Object({ messageId: t.String() }), detail: { summary: "Cancel a message" } },
    )
    .delete(
      "/v2/messages",
      async ({ account, request, query }) => {
        const body = await optionalJsonObject(request);
        const pick = (key: string) => body[key] ?? query[key];
        const cancelled = await cancels.cancelMany(
          account.id,
          optionalStringArray(body.messageIds ?? queryList(request, "messageIds"), "messageIds"),
          commonFilters(pick),
          optionalInt(pick("count"), "count", { min: 1 }),
        );
        return { cancelled };
      },
      { parse: "none", detail: { summary: "Cancel messages in bulk by ids or filters" } },
    );
}
