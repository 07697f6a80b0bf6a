import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import type { FlowControlService } from "./service.ts";

/** `GET /v2/flowControl` and `GET /v2/flowControl/{key}` (fidelity.md §5). */
export function flowControlRoutes(ctx: AppContext, flow: FlowControlService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/flowControl", ({ account }) => flow.list(account), { detail: { summary: "List flow-control keys" } })
    .get("/v2/flowControl/:key", ({ account, params }) => flow.get(account, params.key), {
      params: t.Object({ key: t.String() }),
      detail: { summary: "Live counters of one flow-control key" },
    });
}
