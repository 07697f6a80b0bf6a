import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { notFound } from "../core/errors.ts";
import { messagingAuth } from "../http/auth.ts";
import { commonFilters, optionalInt, optionalJsonObject, optionalStringArray, parseCursor, queryList } from "../http/query.ts";
import { compact, headerMap, messageView } from "../messages/views.ts";
import { bodyFields } from "../util/base64.ts";
import type { DlqEntry, DlqFilter } from "./model.ts";
import type { DlqService } from "./service.ts";
import type { DlqStore } from "./store.ts";

/** The seed's DLQ message plus `dlqId`. */
export function dlqView(e: DlqEntry) {
  return compact({
    ...messageView(e.message),
    dlqId: e.dlqId,
    // Always present (clients require it): 0 when no HTTP answer came, with the reason in `error`.
    responseStatus: e.responseStatus ?? 0,
    error: e.responseStatus === undefined ? e.error : undefined,
    responseHeader: e.responseHeaders ? headerMap(e.responseHeaders) : undefined,
    ...(e.responseBody ? bodyFields(e.responseBody, "responseBody", "responseBodyBase64") : {}),
  });
}

function filterFrom(pick: (key: string) => unknown): DlqFilter {
  return { ...commonFilters(pick), responseStatus: optionalInt(pick("responseStatus"), "responseStatus", { max: 999 }) };
}

const DlqIdParams = t.Object({ dlqId: t.String() });

export function dlqRoutes(ctx: AppContext, store: DlqStore, service: DlqService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/dlq", ({ account, query, request }) => {
      const count = optionalInt(query.count, "count", { min: 1, max: 100 }) ?? 100;
      const filter = { ...filterFrom((k) => query[k]), dlqIds: queryList(request, "dlqIds") };
      const entries = store.list(account.id, filter, parseCursor(query.cursor), count);
      const cursor = entries.length === count ? String(entries[entries.length - 1]!.seq) : undefined;
      return compact({ cursor, messages: entries.map(dlqView) });
    }, { detail: { summary: "List DLQ messages, newest first" } })
    .get("/v2/dlq/:dlqId", ({ account, params }) => {
      const entry = store.get(account.id, params.dlqId);
      if (!entry) throw notFound(`DLQ message ${params.dlqId} not found`);
      return dlqView(entry);
    }, { params: DlqIdParams, detail: { summary: "Get a DLQ message" } })
    .delete("/v2/dlq/:dlqId", async ({ account, params }) => {
      const deleted = await ctx.commit.run(() => store.delete(account.id, params.dlqId));
      if (!deleted) throw notFound(`DLQ message ${params.dlqId} not found`);
      return { deleted: 1 };
    }, { params: DlqIdParams, detail: { summary: "Delete a DLQ message" } })
    .delete("/v2/dlq", async ({ account, request, query }) => {
      const body = await optionalJsonObject(request);
      const ids = optionalStringArray(body.dlqIds ?? queryList(request, "dlqIds"), "dlqIds");
      if (ids) {
        const deleted = await ctx.commit.run(() => ids.filter((id) => store.delete(account.id, id)).length);
        return { deleted };
      }
      // No ids: up to `count` entries matching the filters (any entry without filters), as the
      // hosted service's SDK sends for `dlq.delete({ all: true })`; it calls again with `cursor`.
      const pick = (k: string) => body[k] ?? query[k];
      const count = optionalInt(pick("count"), "count", { min: 1, max: 1000 }) ?? 100;
      const removed = await ctx.commit.run(() => {
        const entries = store.list(account.id, filterFrom(pick), parseCursor(pick("cursor")), count);
        for (const e of entries) store.delete(account.id, e.dlqId);
        return entries;
      });
      const cursor = removed.length === count ? String(removed[removed.length - 1]!.seq) : undefined;
      return compact({ deleted: removed.length, cursor });
    }, { parse: "none", detail: { summary: "Delete DLQ messages by ids, or by filters" } })
    .post("/v2/dlq/retry/:dlqId", async ({ account, params, request, set }) => {
      const [messageId] = await service.retry(account, [params.dlqId], request.headers);
      if (!messageId) throw notFound(`DLQ message ${params.dlqId} not found`);
      set.status = 201;
      return { messageId };
    }, { params: DlqIdParams, parse: "none", detail: { summary: "Re-publish a DLQ message" } })
    .post("/v2/dlq/retry", async ({ account, request, query }) => {
      const body = await optionalJsonObject(request);
      let ids = optionalStringArray(body.dlqIds ?? queryList(request, "dlqIds"), "dlqIds");
      if (!ids) {
        // No ids: retry every entry matching the filters (all of them without filters).
        const pick = (k: string) => body[k] ?? query[k];
        ids = store.list(account.id, filterFrom(pick), null, 1000).map((e) => e.dlqId);
      }
      const messageIds = await service.retry(account, ids, request.headers);
      return { cursor: "", responses: messageIds.flatMap((id) => (id ? [{ messageId: id }] : [])) };
    }, { parse: "none", detail: { summary: "Re-publish many DLQ messages" } });
}
