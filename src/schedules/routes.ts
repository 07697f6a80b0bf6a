import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { readBodyLimited } from "../http/body.ts";
import { callerIp, rawAfter } from "../http/request.ts";
import type { ScheduleService } from "./service.ts";

const ScheduleParams = t.Object({ scheduleId: t.String() });
const ok = () => new Response(null, { status: 200 });

/** `/v2/schedules` (fidelity.md §5). Pause and resume accept PATCH and POST. */
export function scheduleRoutes(ctx: AppContext, schedules: ScheduleService) {
  const pause = (paused: boolean) =>
    ({ account, params }: { account: Parameters<ScheduleService["setPaused"]>[0]; params: { scheduleId: string } }) =>
      schedules.setPaused(account, params.scheduleId, paused).then(ok);
  const paramsOnly = { params: ScheduleParams };
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/schedules", ({ account }) => schedules.list(account), { detail: { summary: "List schedules" } })
    .get("/v2/schedules/:scheduleId", ({ account, params }) => schedules.get(account, params.scheduleId), {
      ...paramsOnly,
      detail: { summary: "Get a schedule" },
    })
    .delete(
      "/v2/schedules/:scheduleId",
      ({ account, params }) => schedules.delete(account, params.scheduleId).then(ok),
      { ...paramsOnly, detail: { summary: "Delete a schedule" } },
    )
    .patch("/v2/schedules/:scheduleId/pause", pause(true), { ...paramsOnly, detail: { summary: "Pause a schedule" } })
    .post("/v2/schedules/:scheduleId/pause", pause(true), { ...paramsOnly, detail: { summary: "Pause a schedule" } })
    .patch("/v2/schedules/:scheduleId/resume", pause(false), { ...paramsOnly, detail: { summary: "Resume a schedule" } })
    .post("/v2/schedules/:scheduleId/resume", pause(false), { ...paramsOnly, detail: { summary: "Resume a schedule" } })
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
      { parse: "none", detail: { summary: "Create or replace a schedule publishing to a URL or a URL Group" } },
    );
}
