import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { readBodyLimited } from "../http/body.ts";
import { callerIp, rawAfter } from "../http/request.ts";
import type { ScheduleService } from "./service.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent, rawBody } from "../openapi/doc.ts";
import { EMPTY_OK, ScheduleCreatedJson, ScheduleJson } from "../messages/api-schemas.ts";
import { PUBLISH_SETTINGS, SCHEDULE_SETTINGS, settingParameters } from "../messages/publish-headers.ts";

const ScheduleParams = t.Object({ scheduleId: t.String() });
const ok = () => new Response(null, { status: 200 });

/** `/v2/schedules` (docs/messaging-api.md, Schedules). Pause and resume accept PATCH and POST. */
export function scheduleRoutes(ctx: AppContext, schedules: ScheduleService) {
  const pause = (paused: boolean) =>
    ({ account, params }: { account: Parameters<ScheduleService["setPaused"]>[0]; params: { scheduleId: string } }) =>
      schedules.setPaused(account, params.scheduleId, paused).then(ok);
  const paramsOnly = { params: ScheduleParams };
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/schedules", ({ account }) => schedules.list(account), { detail: apiDoc({ summary: "List schedules", responses: { 200: jsonContent(Type.Array(ScheduleJson), "every schedule") } }) })
    .get("/v2/schedules/:scheduleId", ({ account, params }) => schedules.get(account, params.scheduleId), {
      ...paramsOnly,
      detail: apiDoc({ summary: "Get a schedule", responses: { 200: jsonContent(ScheduleJson, "the schedule") } }),
    })
    .delete(
      "/v2/schedules/:scheduleId",
      ({ account, params }) => schedules.delete(account, params.scheduleId).then(ok),
      { ...paramsOnly, detail: apiDoc({ summary: "Delete a schedule", responses: { 200: EMPTY_OK } }) },
    )
    .patch("/v2/schedules/:scheduleId/pause", pause(true), { ...paramsOnly, detail: apiDoc({ summary: "Pause a schedule", responses: { 200: EMPTY_OK } }) })
    .post("/v2/schedules/:scheduleId/pause", pause(true), { ...paramsOnly, detail: apiDoc({ summary: "Pause a schedule", responses: { 200: EMPTY_OK } }) })
    .patch("/v2/schedules/:scheduleId/resume", pause(false), { ...paramsOnly, detail: apiDoc({ summary: "Resume a schedule", responses: { 200: EMPTY_OK } }) })
    .post("/v2/schedules/:scheduleId/resume", pause(false), { ...paramsOnly, detail: apiDoc({ summary: "Resume a schedule", responses: { 200: EMPTY_OK } }) })
    .post(
      "/v2/schedules/*",
      async ({ request, account, server }) => {
        const body = await readBodyLimited(request, account.limits.maxMessageSize);
        return schedules.create(account, {
          destination: rawAfter(request, "/v2/schedules/"),
          headers: request.headers,
          body,
          callerIp: callerIp(server, request),
        });
      },
      { parse: "none", detail: apiDoc({ summary: "Create or replace a schedule publishing to a URL or a URL Group", parameters: settingParameters(ctx.dialect, [...SCHEDULE_SETTINGS, ...PUBLISH_SETTINGS]), requestBody: rawBody("the body of every message the schedule publishes"), responses: { 200: jsonContent(ScheduleCreatedJson, "the schedule's id") } }) },
    );
}
