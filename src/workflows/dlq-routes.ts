import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { dlqPage, readDlqSelection } from "../dlq/routes.ts";
import type { DlqStorage } from "../dlq/storage.ts";
import { filterDocs, WORKFLOW_DLQ_FILTERS } from "../filters/filter.ts";
import { messagingAuth } from "../http/auth.ts";
import { DeletedJson } from "../messages/api-schemas.ts";
import { apiDoc, bulkControls, filterBody, filterQuery, headerParam, jsonContent, pageControls } from "../openapi/doc.ts";
import { EmptyJson, StartedRunJson, WorkflowDlqActedJson, WorkflowDlqMessageJson, WorkflowDlqPageJson } from "./api-schemas.ts";
import type { WorkflowDlq } from "./dlq.ts";
import { OVERRIDE_SETTINGS } from "./dlq-overrides.ts";
import { workflowHeaders } from "./protocol.ts";

const DlqIdParams = t.Object({ dlqId: t.String({ minLength: 1 }) });

const FILTERS = filterDocs(WORKFLOW_DLQ_FILTERS);

/** `/v2/workflows/dlq/...`: list, read, resume, restart, retry the failure function, delete (by ids or filters). */
export function workflowDlqRoutes(ctx: AppContext, dlq: WorkflowDlq, store: DlqStorage) {
  const selection = (request: Request) => readDlqSelection(request, ctx.dialect.tokenQueryParam, WORKFLOW_DLQ_FILTERS);
  // Headers only: unlike a publish, a resume or restart reads no settings from the query.
  const overrides = [
    headerParam(workflowHeaders(ctx.dialect).runId, "the new run's id (default: a new `wfr_` id); only when acting on one entry"),
    ...OVERRIDE_SETTINGS.map((s) => headerParam(`${ctx.dialect.prefix}-${s.suffix}`, `${s.description}; default: the failed run's`, s.schema)),
  ];
  const bulkAction = (summary: string) =>
    apiDoc({
      summary,
      parameters: [...filterQuery(FILTERS), ...bulkControls(1000), ...overrides],
      requestBody: filterBody(FILTERS),
      responses: { 200: jsonContent(WorkflowDlqActedJson, "the new runs") },
    });
  // The body of a single resume or restart is not read.
  const oneAction = (summary: string) =>
    apiDoc({ summary, parameters: overrides, requestBody: null, responses: { 200: jsonContent(StartedRunJson, "the new run") } });
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/workflows/dlq", ({ account, request }) => dlqPage(store, dlq.fields, account.id, request, WORKFLOW_DLQ_FILTERS, { sources: ["workflow"] }), {
      detail: apiDoc({
        summary: "Failed workflow runs' DLQ entries, newest first (GET /v2/dlq?source=workflow)",
        parameters: [...filterQuery(FILTERS), ...pageControls(100)],
        responses: { 200: jsonContent(WorkflowDlqPageJson, "a page of failed runs' entries") },
      }),
    })
    .get("/v2/workflows/dlq/:dlqId", ({ account, params }) => dlq.get(account, params.dlqId), {
      params: DlqIdParams,
      detail: apiDoc({ summary: "A failed workflow run's DLQ entry", responses: { 200: jsonContent(WorkflowDlqMessageJson, "the entry") } }),
    })
    .delete(
      "/v2/workflows/dlq/:dlqId",
      async ({ account, params }) => {
        await dlq.deleteOne(account, params.dlqId);
        return { deleted: 1 };
      },
      { params: DlqIdParams, detail: apiDoc({ summary: "Delete a failed workflow run's DLQ entry", responses: { 200: jsonContent(DeletedJson, "deleted") } }) },
    )
    .post("/v2/workflows/dlq/resume", async ({ account, request }) => dlq.act("resume", account, await selection(request), request.headers), {
      parse: "none",
      detail: bulkAction("Resume failed workflow runs from their failed step (new runs), by DLQ ids or filters (oldest first, at most count, 100 by default)"),
    })
    .post("/v2/workflows/dlq/restart", async ({ account, request }) => dlq.act("restart", account, await selection(request), request.headers), {
      parse: "none",
      detail: bulkAction("Restart failed workflow runs from the beginning (new runs), by DLQ ids or filters (oldest first, at most count, 100 by default)"),
    })
    .post("/v2/workflows/dlq/resume/:dlqId", ({ account, params, request }) => dlq.actOn("resume", account, params.dlqId, request.headers), {
      params: DlqIdParams,
      parse: "none",
      detail: oneAction("Resume one failed workflow run from its failed step"),
    })
    .post("/v2/workflows/dlq/restart/:dlqId", ({ account, params, request }) => dlq.actOn("restart", account, params.dlqId, request.headers), {
      params: DlqIdParams,
      parse: "none",
      detail: oneAction("Restart one failed workflow run from the beginning"),
    })
    .post("/v2/workflows/dlq/callback/:dlqId", ({ account, params }) => dlq.retryFailureFunction(account, params.dlqId), {
      params: DlqIdParams,
      detail: apiDoc({
        summary: "Call a failed workflow run's failure function again (only one whose call failed)",
        responses: { 200: jsonContent(StartedRunJson, "the run whose failure function is called") },
      }),
    })
    .delete(
      "/v2/workflows/dlq/callback/:dlqId",
      async ({ account, params }) => {
        await dlq.cancelFailureFunction(account, params.dlqId);
        return {};
      },
      {
        params: DlqIdParams,
        detail: apiDoc({
          summary: "Cancel a failed workflow run's failure function call in progress (400 when none is)",
          responses: { 200: jsonContent(EmptyJson, "cancelled: the entry's failure function state is CALLBACK_CANCELED") },
        }),
      },
    )
    .delete("/v2/workflows/dlq", async ({ account, request }) => dlq.delete(account, await selection(request)), {
      parse: "none",
      detail: apiDoc({
        summary: "Delete failed workflow runs' DLQ entries by ids or filters (oldest first, at most count, 100 by default)",
        parameters: [...filterQuery(FILTERS), ...bulkControls(1000)],
        requestBody: filterBody(FILTERS),
        responses: { 200: jsonContent(DeletedJson, "how many were deleted") },
      }),
    });
}
