import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { readDlqSelection } from "../dlq/routes.ts";
import { WORKFLOW_DLQ_FILTERS } from "../filters/filter.ts";
import { messagingAuth } from "../http/auth.ts";
import type { WorkflowDlq } from "./dlq.ts";

const DlqIdParams = t.Object({ dlqId: t.String({ minLength: 1 }) });

/** `/v2/workflows/dlq/...`: resume, restart, retry the failure function, delete (by ids or filters). */
export function workflowDlqRoutes(ctx: AppContext, dlq: WorkflowDlq) {
  const selection = (request: Request) => readDlqSelection(request, ctx.dialect.tokenQueryParam, WORKFLOW_DLQ_FILTERS);
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
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
