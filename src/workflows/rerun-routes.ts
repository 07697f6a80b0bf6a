import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { apiDoc, headerParam, jsonContent } from "../openapi/doc.ts";
import { StartedRunJson } from "./api-schemas.ts";
import { OVERRIDE_SETTINGS } from "./dlq-overrides.ts";
import { workflowHeaders } from "./protocol.ts";
import type { WorkflowRerun } from "./rerun.ts";

export const RerunBody = t.Object(
  {
    fromStep: t.Union([t.String({ minLength: 1 }), t.Integer({ minimum: 1 })], {
      description: "the step to run again from: its stepId or stepName as the run's log shows them (`init`: from the start)",
    }),
    results: t.Optional(
      t.Record(t.String(), t.Unknown(), {
        description: "new results for steps the rerun keeps, by stepName: what the step gives the workflow's code",
      }),
    ),
  },
  { additionalProperties: false },
);

/** `POST /v2/workflows/runs/{runId}/rerun`: a new run from a step of any run. */
export function rerunRoutes(ctx: AppContext, rerun: WorkflowRerun) {
  const overrides = [
    headerParam(workflowHeaders(ctx.dialect).runId, "the new run's id (default: a new `wfr_` id)"),
    ...OVERRIDE_SETTINGS.map((s) =>
      headerParam(`${ctx.dialect.prefix}-${s.suffix}`, `${s.description}; default: the source run's`, s.schema),
    ),
  ];
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post(
      "/v2/workflows/runs/:runId/rerun",
      ({ account, params, body, request }) => rerun.rerun(account, params.runId, body, request.headers),
      {
        params: t.Object({ runId: t.String({ minLength: 1 }) }),
        // JSON whatever the Content-Type: `curl -d '{...}'` sends it as a form.
        parse: "json",
        body: RerunBody,
        detail: apiDoc({
          summary: "Run a workflow run again from one of its steps (a new run that keeps the steps before it as completed)",
          parameters: overrides,
          responses: { 200: jsonContent(StartedRunJson, "the new run") },
        }),
      },
    );
}
