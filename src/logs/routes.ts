import { Elysia } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { badRequest } from "../core/errors.ts";
import { messagingAuth } from "../http/auth.ts";
import { filterDocs, LOG_FILTERS, parseFilter } from "../filters/filter.ts";
import { optionalInt, parseCursor } from "../http/query.ts";
import { labelFields } from "../model/labels.ts";
import { compact, headerMap } from "../messages/views.ts";
import { boundedPage, PAGE_BYTE_BUDGET } from "../http/page.ts";
import { toBase64 } from "../util/base64.ts";
import { EVENT_STATES, type EventRecord, type EventState } from "./model.ts";
import type { EventStorage } from "./storage.ts";
import { apiDoc, filterQuery, jsonContent, pageControls } from "../openapi/doc.ts";
import { EventsPageJson, LogsPageJson } from "../messages/api-schemas.ts";

const IN_PROGRESS: EventState[] = ["ACTIVE", "RETRY", "ERROR"];

function eventView(e: EventRecord) {
  return compact({
    time: e.time,
    messageId: e.messageId,
    state: e.state,
    url: e.url,
    error: e.error,
    nextDeliveryTime: e.nextDeliveryTime,
    topicName: e.topicName,
    endpointName: e.endpointName,
    scheduleId: e.scheduleId,
    queueName: e.queueName,
    header: e.header ? headerMap(e.header) : undefined,
    body: e.body ? toBase64(e.body) : undefined,
    responseStatus: e.responseStatus,
    responseBody: e.responseBody ? toBase64(e.responseBody) : undefined,
    responseHeaders: e.responseHeaders ? headerMap(e.responseHeaders) : undefined,
    timeout: e.timeoutMs,
    method: e.method,
    callback: e.callback,
    callbackHeaders: e.callbackHeaders ? headerMap(e.callbackHeaders) : undefined,
    failureCallback: e.failureCallback,
    failureCallbackHeaders: e.failureCallbackHeaders ? headerMap(e.failureCallbackHeaders) : undefined,
    maxRetries: e.maxRetries,
    ...labelFields(e.labels),
    flowControlKey: e.flowControlKey,
    // Both names: the official clients read one or the other.
    retryDelayExpression: e.retryDelayExpr,
    retryDelayExpr: e.retryDelayExpr,
    // Only on attempts a test's fault rule shaped: an injected failure never passes for a real one.
    fault: e.fault,
    // Only while tracing is on: the trace to look the message up by in a tracing UI.
    traceId: e.traceId,
  });
}

/** `state` values as given; `IN_PROGRESS` stands for ACTIVE, RETRY and ERROR. */
function parseStates(values: string[] | undefined): EventState[] | undefined {
  if (values === undefined) return undefined;
  return [...new Set(values.flatMap((text) => {
    if (text === "IN_PROGRESS") return IN_PROGRESS;
    if (!(EVENT_STATES as readonly string[]).includes(text))
      throw badRequest(`invalid state "${text.slice(0, 40)}": one of ${EVENT_STATES.join(", ")} or IN_PROGRESS`);
    return [text as EventState];
  }))];
}

/**
 * A page of the event log, newest first, as `GET /v2/logs` reads it from its query (filters,
 * `count`, `cursor`); `copies`: how many times the answer carries each entry (the page budget covers them all).
 */
export async function listLogEntries(events: EventStorage, accountId: string, query: URLSearchParams, copies = 1) {
  // A listing ignores keys it does not know (only bulk deletes refuse them).
  const filter = parseFilter({ query }, { accepts: LOG_FILTERS, strict: false, control: [] });
  filter.states = parseStates(filter.states);
  const count = optionalInt(query.get("count") ?? undefined, "count", { min: 1, max: 1000 }) ?? 100;
  const rows = await events.newest(accountId, filter, parseCursor(query.get("cursor") ?? undefined), count);
  const { items, cursor } = boundedPage(rows, { count, view: eventView, positionOf: (e) => e.seq, budget: PAGE_BYTE_BUDGET / copies });
  return { cursor, entries: items };
}

/** `GET /v2/events` and `GET /v2/logs`: the event log, newest first, with filters and a cursor. */
export function logRoutes(ctx: AppContext, events: EventStorage) {
  const list = (accountId: string, request: Request, copies: number) =>
    listLogEntries(events, accountId, new URL(request.url).searchParams, copies);
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/events", async ({ account, request }) => {
      const { cursor, entries } = await list(account.id, request, 1);
      return compact({ cursor, events: entries });
    }, { detail: apiDoc({ summary: "List message events (logs), newest first", parameters: [...filterQuery(filterDocs(LOG_FILTERS)), ...pageControls(1000)], responses: { 200: jsonContent(EventsPageJson, "a page of log entries") } }) })
    .get("/v2/logs", async ({ account, request }) => {
      // Both names, for clients of either; the page budget counts the entries twice.
      const { cursor, entries } = await list(account.id, request, 2);
      return compact({ cursor, logs: entries, events: entries });
    }, { detail: apiDoc({ summary: "List message logs, newest first", parameters: [...filterQuery(filterDocs(LOG_FILTERS)), ...pageControls(1000)], responses: { 200: jsonContent(LogsPageJson, "a page of log entries, under both names") } }) });
}
