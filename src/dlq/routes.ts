import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { notFound } from "../core/errors.ts";
import { messagingAuth } from "../http/auth.ts";
import { readBulkSelection, takePage, type BulkSelection } from "../filters/bulk.ts";
import { DLQ_FILTERS, filterDocs, parseFilter, type Filter, type FilterKey } from "../filters/filter.ts";
import { optionalInt, optionalJsonObject, parseCursor } from "../http/query.ts";
import { compact, headerMap, messageView } from "../messages/views.ts";
import { boundedPage } from "../http/page.ts";
import { bodyFields } from "../util/base64.ts";
import type { Maybe } from "../util/maybe.ts";
import type { DlqEntry } from "./model.ts";
import type { DlqService } from "./service.ts";
import type { DlqStorage } from "./storage.ts";
import { apiDoc, bulkControls, filterBody, filterQuery, jsonContent, pageControls } from "../openapi/doc.ts";
import { DeletedJson, DlqMessageJson, DlqPageJson, NewMessageJson, RetriedJson } from "../messages/api-schemas.ts";
import { settingParameters } from "../messages/publish-headers.ts";

/** A DLQ entry: the message plus `dlqId` (docs/messaging-api.md, Messages, logs and the DLQ). */
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


const DlqIdParams = t.Object({ dlqId: t.String() });

/** The entries a bulk DLQ operation acts on: by `dlqIds` or filters, at most `count` (100 by default). */
export async function readDlqSelection(request: Request, tokenParam: string, accepts: readonly FilterKey[]): Promise<BulkSelection> {
  return readBulkSelection(new URL(request.url).searchParams, await optionalJsonObject(request), {
    accepts,
    tokenParam,
    defaultCount: 100,
    maxCount: 1000,
    ids: "dlqIds",
  });
}

/**
 * A page of DLQ entries, newest first, as `GET /v2/dlq` answers (`count`, `cursor` and the filters
 * of the query); `narrow` restricts it further (the workflow DLQ's own listing).
 */
export async function dlqPage(
  store: DlqStorage,
  moreFields: DlqFields,
  accountId: string,
  source: Request | URLSearchParams,
  accepts: readonly FilterKey[],
  narrow: Filter = {},
) {
  const query = source instanceof URLSearchParams ? source : new URL(source.url).searchParams;
  const count = optionalInt(query.get("count") ?? undefined, "count", { min: 1, max: 100 }) ?? 100;
  // A listing ignores keys it does not know (only bulk deletes refuse them).
  const filter = { ...parseFilter({ query }, { accepts, strict: false, control: [] }), ...narrow };
  const entries = await store.newest(accountId, filter, parseCursor(query.get("cursor") ?? undefined), count);
  // The page is cut by the entries' own size (the few more fields do not count against the budget).
  const taken: DlqEntry[] = [];
  const { items, cursor } = boundedPage(entries, { count, view: (e) => (taken.push(e), dlqView(e)), positionOf: (e) => e.seq });
  const more = await Promise.all(taken.slice(0, items.length).map(moreFields));
  return compact({ cursor, messages: items.map((item, i) => ({ ...item, ...more[i] })) });
}

/** More fields of an entry, from a layer that knows what its message was part of (workflow runs); it may read them later. */
export type DlqFields = (e: DlqEntry) => Maybe<Record<string, unknown> | undefined>;

export function dlqRoutes(ctx: AppContext, store: DlqStorage, service: DlqService, moreFields: DlqFields = () => undefined) {
  const view = async (e: DlqEntry) => ({ ...dlqView(e), ...(await moreFields(e)) });
  const bulkSelection = (request: Request) => readDlqSelection(request, ctx.dialect.tokenQueryParam, DLQ_FILTERS);
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/dlq", ({ account, request }) => dlqPage(store, moreFields, account.id, request, DLQ_FILTERS), {
      detail: apiDoc({ summary: "List DLQ messages, newest first", parameters: [...filterQuery(filterDocs(DLQ_FILTERS)), ...pageControls(100)], responses: { 200: jsonContent(DlqPageJson, "a page of DLQ messages") } }),
    })
    .get("/v2/dlq/:dlqId", async ({ account, params }) => {
      const entry = await store.read(account.id, params.dlqId);
      if (!entry) throw notFound(`DLQ message ${params.dlqId} not found`);
      return view(entry);
    }, { params: DlqIdParams, detail: apiDoc({ summary: "Get a DLQ message", responses: { 200: jsonContent(DlqMessageJson, "the DLQ message") } }) })
    .delete("/v2/dlq/:dlqId", async ({ account, params }) => {
      if (!(await service.delete(account.id, params.dlqId))) throw notFound(`DLQ message ${params.dlqId} not found`);
      return { deleted: 1 };
    }, { params: DlqIdParams, detail: apiDoc({ summary: "Delete a DLQ message", responses: { 200: jsonContent(DeletedJson, "deleted") } }) })
    .delete("/v2/dlq", async ({ account, request }) => {
      const { filter, count, after } = await bulkSelection(request);
      // The oldest `count` matching entries (all of them without filters, as the SDK's
      // `dlq.delete({ all: true })` sends); a cursor while more match.
      const { page, cursor } = await ctx.commit.run(async (tx) => {
        const taken = takePage(await store.oldest(tx, account.id, filter, after, count + 1), count, (e) => e.seq);
        for (const e of taken.page) await store.delete(tx, account.id, e.dlqId);
        return taken;
      });
      return compact({ deleted: page.length, cursor });
    }, { parse: "none", detail: apiDoc({ summary: "Delete DLQ messages by ids or filters (oldest first, at most count)", parameters: [...filterQuery(filterDocs(DLQ_FILTERS)), ...bulkControls(1000)], requestBody: filterBody(filterDocs(DLQ_FILTERS)), responses: { 200: jsonContent(DeletedJson, "how many were deleted") } }) })
    .post("/v2/dlq/retry/:dlqId", async ({ account, params, request, set }) => {
      const [messageId] = await service.retry(account, [params.dlqId], request.headers);
      if (!messageId) throw notFound(`DLQ message ${params.dlqId} not found`);
      set.status = 201;
      return { messageId };
    }, { params: DlqIdParams, parse: "none", detail: apiDoc({ summary: "Re-publish a DLQ message", parameters: settingParameters(ctx.dialect), responses: { 201: jsonContent(NewMessageJson, "the new message") } }) })
    .post("/v2/dlq/retry", async ({ account, request, set }) => {
      const { filter, count, after } = await bulkSelection(request);
      const { page, cursor } = takePage(await store.readOldest(account.id, filter, after, count + 1), count, (e) => e.seq);
      const messageIds = await service.retry(account, page.map((e) => e.dlqId), request.headers);
      // A bulk retry answers `cursor: ""` when nothing more matches as the hosted service does; 201 as it documents.
      set.status = 201;
      return { cursor: cursor ?? "", responses: messageIds.flatMap((id) => (id ? [{ messageId: id }] : [])) };
    }, { parse: "none", detail: apiDoc({ summary: "Re-publish DLQ messages by ids or filters (oldest first, at most count, 100 by default)", parameters: [...filterQuery(filterDocs(DLQ_FILTERS)), ...bulkControls(1000), ...settingParameters(ctx.dialect)], requestBody: filterBody(filterDocs(DLQ_FILTERS)), responses: { 201: jsonContent(RetriedJson, "the new messages") } }) });
}
