import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { dlqPage, readDlqSelection } from "../dlq/routes.ts";
import type { DlqStorage } from "../dlq/store.ts";
import { WORKFLOW_DLQ_FILTERS } from "../filters/filter.ts";
import { messagingAuth } from "../http/auth.ts";
import type { WorkflowDlq } from "./dlq.ts";

const DlqIdParams = t.Object({ dlqId: t.String({ minLength: 1 }) });

/** `/v2/workflows/dlq/...`: list, read, resume, restart, retry the failure function, delete (by ids or filters). */
export function workflowDlqRoutes(ctx: AppContext, dlq: WorkflowDlq, store: DlqStorage) {
  const selection = (request: Request) => readDlqSelection(request, ctx.dialect.tokenQueryParam, WORKFLOW_DLQ_FILTERS);
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/workflows/dlq", ({ account, request }) => dlqPage(store, dlq.fields, account.id, request, WORKFLOW_DLQ_FILTERS, { sources: ["workflow"] }), {
      detail: { summary: "Failed workflow runs' DLQ entries, newest first (GET /v2/dlq?source=workflow)" },
    })
    .get("/v2/workflows/dlq/:dlqId", ({ account, params }) => dlq.get(account, params.dlqId), {
      params: DlqIdParams,
      detail: { summary: "A failed workflow run's DLQ entry" },
    })
    .delete(
      "/v2/workflows/dlq/:dlqId",
      async ({ account, params }) => {
        await dlq.deleteOne(account, params.dlqId);
        return { deleted: 1 };
      },
      { params: DlqIdParams, detail: { summary: "Delete a failed workflow run's DLQ entry" } },
    )
    .post("/v2/workflows/dlq/resume", async ({ account, request }) => dlq.act("resume", account, await selection(request), request.headers), {
      parse: "none",
      detail: { summary: "Resume failed workflow runs from their failed step (new runs), by DLQ ids or filters" },
    })
    .post("/v2/workflows/dlq/restart", async ({ account, request }) => dlq.act("restart", account, await selection(request), request.headers), {
      parse: "none",
      detail: { summary: "Restart failed workflow runs from the beginning (new runs), by DLQ ids or filters" },
    })
    .post("/v2/workflows/dlq/resume/:dlqId", ({ account, params, request }) => dlq.actOn("resume", account, params.dlqId, request.headers), {
      params: DlqIdParams,
      parse: "none",
      detail: { summary: "Resume one failed workflow run from its failed step" },
    })
    .post("/v2/workflows/dlq/restart/:dlqId", ({ account, params, request }) => dlq.actOn("restart", account, params.dlqId, request.headers), {
      params: DlqIdParams,
      parse: "none",
      detail: { summary: "Restart one failed workflow run from the beginning" },
    })
    .post("/v2/workflows/dlq/callback/:dlqId", ({ account, params }) => dlq.retryFailureFunction(account, params.dlqId), {
      params: DlqIdParams,
      detail: { summary: "Call a failed workflow run's failure function again" },
    })
    .delete("/v2/workflows/dlq", async ({ account, request }) => dlq.delete(account, await selection(request)), {
      parse: "none",
      detail: { summary: "Delete failed workflow runs' DLQ entries by ids or filters" },
    });
}
