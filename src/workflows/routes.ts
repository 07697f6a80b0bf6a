import { Elysia, t } from "elysia";
import type { AccountRegistry } from "../accounts/accounts.ts";
import type { AppContext } from "../context/app-context.ts";
import { badRequest, notFound } from "../core/errors.ts";
import { filterDocs, WORKFLOW_CANCEL_FILTERS, WORKFLOW_LOG_FILTERS, type FilterKey } from "../filters/filter.ts";
import { messagingAuth } from "../http/auth.ts";
import { readBodyLimited } from "../http/body.ts";
import { optionalInt, parseCursor } from "../http/query.ts";
import { callerIp, rawAfter } from "../http/request.ts";
import { compact } from "../messages/views.ts";
import { settingParameters } from "../messages/publish-headers.ts";
import { apiDoc, filterQuery, headerParam, jsonContent, queryParam, rawBody } from "../openapi/doc.ts";
import {
  EmptyJson,
  NotifiedJson,
  RawStepsJson,
  RunsCancelledJson,
  TriggeredRunJson,
  TriggeredRunsJson,
  WaitersJson,
  WorkflowLogsJson,
} from "./api-schemas.ts";
import { logsQuery, runFilter } from "./log-query.ts";
import { RUN_STATES, STEP_STATES } from "./model.ts";
import { workflowHeaders } from "./protocol.ts";
import type { RunService } from "./runs.ts";
import type { TriggerService } from "./trigger.ts";
import type { WaitService } from "./waits.ts";
import { webhookEvent } from "./webhook.ts";

export interface WorkflowRouteDeps {
  runs: RunService;
  waits: WaitService;
  trigger: TriggerService;
}

const RunIdParams = t.Object({ runId: t.String({ minLength: 1 }) });
const EventIdParams = t.Object({ eventId: t.String({ minLength: 1 }) });

const LogsQuery = t.Object(
  {
    groupBy: t.Optional(t.String()),
    cursor: t.Optional(t.String()),
    count: t.Optional(t.Numeric({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: true },
);

/** Every value of a query key, repeated or comma-separated; undefined when absent. */
function queryList(request: Request, key: string): string[] | undefined {
  const values = new URL(request.url).searchParams.getAll(key).flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean);
  return values.length > 0 ? values : undefined;
}

const SEVERAL = "; several as repeated keys or comma separated";
/** Where a run filter means something else than the message filter of the same name. */
const RUN_FILTER_DOCS: Partial<Record<FilterKey, string>> = {
  state: `run states: ${RUN_STATES.join(", ")}; in logs also step states (a run with such a step): ${STEP_STATES.join(", ")}${SEVERAL}`,
  workflowCreatedAt: `creation times of the runs, Unix ms${SEVERAL}`,
  messageId: "runs with this message",
  workflowUrl: `workflow URLs${SEVERAL}`,
};

/** The run filters of a listing or a bulk cancel as query parameters. */
function runFilterQuery(keys: readonly FilterKey[], override: Partial<Record<FilterKey, string>> = {}) {
  const docs = { ...RUN_FILTER_DOCS, ...override };
  return filterQuery(filterDocs(keys).map((f) => ({ ...f, description: docs[f.name as FilterKey] ?? f.description })));
}

// 201, as the hosted API documents (the official clients take any 2XX).
const NOTIFIED = { 201: jsonContent(NotifiedJson, "the waiters the event reached") };
const EVENT_BODY = rawBody("the event's data, any bytes: the waiting step receives it as its result");

/** The workflow protocol's own endpoints (workflow messages themselves use publish and batch). */
export function workflowRoutes(ctx: AppContext, deps: WorkflowRouteDeps) {
  const logs = async ({ account, query, request }: { account: { id: string }; query: Record<string, unknown>; request: Request }) =>
    compact(await deps.runs.logs(account.id, logsQuery(request, WORKFLOW_LOG_FILTERS), parseCursor(query.cursor), Number(query.count ?? 100)));

  const names = workflowHeaders(ctx.dialect);
  const logsDoc = (summary: string) =>
    apiDoc({
      summary,
      parameters: [
        ...runFilterQuery(WORKFLOW_LOG_FILTERS),
        queryParam("workflowRuns", `exactly these runs: runId@workflowCreatedAt (Unix ms) pairs${SEVERAL}`),
        queryParam("trimBody", "cut every request and response body of the log to its first this many characters", { type: "integer", minimum: 0 }),
      ],
      responses: { 200: jsonContent(WorkflowLogsJson, "a page of runs") },
    });
  const runIdHeader = headerParam(names.runId, "the new run's id (default: a new `wfr_` id)");
  const unknownSdkHeader = headerParam(names.unknownSdk, "`true`: the endpoint's SDK first takes the run over (one call more)");

  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/workflows/events", logs, { query: LogsQuery, detail: logsDoc("Workflow runs with their steps (client.logs), newest first") })
    .get("/v2/workflows/logs", logs, { query: LogsQuery, detail: logsDoc("Workflow runs with their steps, newest first") })
    .get("/v2/workflows/runs/:runId", ({ account, params }) => deps.runs.rawSteps(account.id, params.runId), {
      params: RunIdParams,
      detail: apiDoc({
        summary: "A running workflow run's raw steps (the SDK's lazy fetch); 404 once it has ended",
        responses: { 200: jsonContent(RawStepsJson, "the run's step list, in order") },
      }),
    })
    .delete(
      "/v2/workflows/runs/:runId",
      async ({ account, params, query, request }) => {
        // Without `cancel` the run is cancelled, as the hosted API does: only the SDK's own end of a
        // run (`cancel=false`, with its result) finishes it.
        await deps.runs.end(account.id, params.runId, query.cancel !== "false", await request.text());
        return {};
      },
      {
        params: RunIdParams,
        query: t.Object({
          cancel: t.Optional(
            t.Union([t.Literal("true"), t.Literal("false")], {
              description: "false: the run finished (the body is its result); true or absent: the run is cancelled",
            }),
          ),
        }),
        parse: "none",
        detail: apiDoc({
          summary: "Cancel a workflow run, or (cancel=false, the SDK's end of a run) finish it with its result",
          requestBody: rawBody("with cancel=false: the run's result (the route function's return value as JSON text); empty: none"),
          responses: { 200: jsonContent(EmptyJson, "ended (or had ended already)") },
        }),
      },
    )
    .delete(
      "/v2/workflows/runs",
      async ({ account, request }) => {
        const query = new URL(request.url).searchParams;
        const runIds = queryList(request, "workflowRunIds");
        const control = ["workflowRunIds", "workflowUrlExactMatch", "count", "cursor", ctx.dialect.tokenQueryParam];
        // `workflowUrl` is a prefix unless `workflowUrlExactMatch=true` (the SDK's `workflowUrlStartingWith` sends a prefix).
        const filter = { ...runFilter(request, WORKFLOW_CANCEL_FILTERS, true, control), urlPrefix: query.get("workflowUrlExactMatch") !== "true" };
        const count = optionalInt(query.get("count") ?? undefined, "count", { min: 1 });
        const cancelled = await deps.runs.cancel(account.id, { runIds, filter, count });
        return { cancelled };
      },
      {
        query: t.Record(t.String(), t.Union([t.String(), t.Array(t.String())])),
        detail: apiDoc({
          summary: "Cancel workflow runs by ids or filters (several values as repeated keys or comma separated)",
          parameters: [
            queryParam("workflowRunIds", `the runs to cancel (then filters and count do not apply)${SEVERAL}`),
            ...runFilterQuery(WORKFLOW_CANCEL_FILTERS, { workflowUrl: `workflow URLs: a prefix unless workflowUrlExactMatch=true${SEVERAL}` }),
            queryParam("workflowUrlExactMatch", "true: workflowUrl is the whole URL, not a prefix", { type: "string", enum: ["true", "false"] }),
            queryParam("count", "with filters: cancel at most this many running runs (at most 10000)", { type: "integer", minimum: 1 }),
          ],
          responses: { 200: jsonContent(RunsCancelledJson, "how many runs were cancelled") },
        }),
      },
    )
    .post(
      "/v2/wait/:eventId",
      async ({ account, params, body, request }) => {
        await deps.waits.wait(account, params.eventId, body, request.headers);
        return {};
      },
      {
        params: EventIdParams,
        body: t.Object({
          url: t.String({ minLength: 1 }),
          timeout: t.Optional(t.Union([t.String(), t.Number()])),
          timeoutUrl: t.Optional(t.String()),
          timeoutBody: t.Optional(t.String()),
          timeoutHeaders: t.Optional(t.Record(t.String(), t.Array(t.String()))),
          step: t.Record(t.String(), t.Unknown()),
        }),
        detail: apiDoc({
          summary: "A workflow step waits for an event (context.waitForEvent)",
          parameters: [{ ...headerParam(names.runId, "the waiting run"), required: true }],
          responses: { 200: jsonContent(EmptyJson, "the step waits (or took an event kept for it)") },
        }),
      },
    )
    // One parameter name at one position (the router requires it): `id` is the event id of
    // `/v2/notify/{eventId}` and the run id of `/v2/notify/{workflowRunId}/{eventId}`.
    .post(
      "/v2/notify/:id",
      async ({ account, params, request, set }) => {
        const notified = await deps.waits.notify(account, params.id, await readBodyLimited(request, account.limits.maxMessageSize));
        set.status = 201;
        return notified;
      },
      {
        params: t.Object({ id: t.String({ minLength: 1 }) }),
        parse: "none",
        detail: apiDoc({ summary: "Notify every step waiting for an event", requestBody: EVENT_BODY, responses: NOTIFIED }),
      },
    )
    .post(
      "/v2/notify/:id/:eventId",
      async ({ account, params, request, set }) => {
        const max = account.limits.maxMessageSize;
        const notified = await deps.waits.notify(account, params.eventId, await readBodyLimited(request, max), params.id);
        set.status = 201;
        return notified;
      },
      {
        params: t.Object({ id: t.String({ minLength: 1 }), eventId: t.String({ minLength: 1 }) }),
        parse: "none",
        detail: apiDoc({ summary: "Notify one run's wait for an event (kept until the run waits for it)", requestBody: EVENT_BODY, responses: NOTIFIED }),
      },
    )
    .get("/v2/waiters/:eventId", ({ account, params }) => deps.waits.waiters(account, params.eventId), {
      params: EventIdParams,
      detail: apiDoc({ summary: "The steps waiting for an event", responses: { 200: jsonContent(WaitersJson, "the waiters") } }),
    })
    .post(
      "/v2/trigger/*",
      async ({ account, request, server }) =>
        deps.trigger.trigger(account, {
          destination: rawAfter(request, "/v2/trigger/"),
          headers: request.headers,
          body: await readBodyLimited(request, account.limits.maxMessageSize),
          callerIp: callerIp(server, request),
        }),
      {
        parse: "none",
        detail: apiDoc({
          summary: "Start a workflow run for a caller without the SDK",
          parameters: [runIdHeader, unknownSdkHeader, ...settingParameters(ctx.dialect)],
          requestBody: rawBody("the run's initial payload"),
          responses: { 200: jsonContent(TriggeredRunJson, "the run") },
        }),
      },
    )
    .post("/v2/batch/trigger", async ({ account, body, server, request, set }) => {
      const runs = await deps.trigger.triggerMany(account, body, callerIp(server, request));
      set.status = 201;
      return runs;
    }, {
      body: t.Array(
        t.Object({
          destination: t.String({ minLength: 1 }),
          body: t.Optional(t.String()),
          headers: t.Optional(t.Record(t.String(), t.Union([t.String(), t.Array(t.String())]))),
        }),
        { maxItems: 1000 },
      ),
      detail: apiDoc({
        summary: "Start several workflow runs for callers without the SDK",
        responses: { 201: jsonContent(TriggeredRunsJson, "the runs") },
      }),
    });
}

/**
 * `/v2/workflows/hooks/{userId}/{runId}/{eventId}`: the URL `context.createWebhook` hands out, called
 * by third parties without credentials; any method. The call becomes the event of the run's wait.
 */
export function webhookRoutes(accounts: AccountRegistry, waits: WaitService) {
  return new Elysia().all(
    "/v2/workflows/hooks/:userId/:runId/:eventId",
    async ({ params, request }) => {
      const account = accounts.byId(params.userId);
      if (!account) throw notFound(`user ${params.userId} not found`);
      const event = webhookEvent(request, await readBodyLimited(request, account.limits.maxMessageSize));
      return waits.notify(account, params.eventId, event, params.runId);
    },
    {
      params: t.Object({ userId: t.String(), runId: t.String(), eventId: t.String() }),
      parse: "none",
      detail: apiDoc({
        summary: "A workflow webhook (context.createWebhook): any method, no credentials",
        security: [],
        requestBody: rawBody("any body: the waiting step receives the call (method, headers, body, URL) as its event"),
        responses: { 200: jsonContent(NotifiedJson, "the waiters the call reached") },
      }),
    },
  );
}
