import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import type { FlowControlService } from "./service.ts";

const KeyParams = t.Object({ key: t.String() });
// Checked by the service, which names the field and the allowed range in its error.
const PinQuery = t.Object({
  parallelism: t.Optional(t.String({ description: "deliveries in flight at most" })),
  rate: t.Optional(t.String({ description: "deliveries started per period at most" })),
  period: t.Optional(t.String({ description: "the rate's period, in seconds" })),
});
const UnpinQuery = t.Object({
  parallelism: t.Optional(t.String({ description: "true: remove the pinned parallelism" })),
  rate: t.Optional(t.String({ description: "true: remove the pinned rate and period" })),
});
const done = () => new Response(null, { status: 200 });

/** `/v2/flowControl` and `/v2/globalParallelism` (fidelity.md §5, §8). Actions answer 200 with an empty body. */
export function flowControlRoutes(ctx: AppContext, flow: FlowControlService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/flowControl", ({ account }) => flow.list(account), { detail: { summary: "List flow-control keys" } })
    .get("/v2/flowControl/:key", ({ account, params }) => flow.get(account, params.key), {
      params: KeyParams,
      detail: { summary: "Live counters and settings of one flow-control key" },
    })
    .post("/v2/flowControl/:key/pause", ({ account, params }) => flow.pause(account, params.key).then(done), {
      params: KeyParams,
      detail: { summary: "Pause a flow-control key: its messages wait until resume" },
    })
    .post("/v2/flowControl/:key/resume", ({ account, params }) => flow.resume(account, params.key).then(done), {
      params: KeyParams,
      detail: { summary: "Resume a paused flow-control key" },
    })
    .post("/v2/flowControl/:key/pin", ({ account, params, query }) => flow.pin(account, params.key, query).then(done), {
      params: KeyParams,
      query: PinQuery,
      detail: { summary: "Fix parallelism, rate and/or period of a key over what its messages carry" },
    })
    .post("/v2/flowControl/:key/unpin", ({ account, params, query }) => flow.unpin(account, params.key, query).then(done), {
      params: KeyParams,
      query: UnpinQuery,
      detail: { summary: "Remove pinned parallelism and/or rate" },
    })
    .post("/v2/flowControl/:key/resetRate", ({ account, params }) => flow.resetRate(account, params.key).then(done), {
      params: KeyParams,
      detail: { summary: "Start a new rate period now (rate count 0)" },
    })
    .get("/v2/globalParallelism", ({ account }) => flow.globalParallelism(account), {
      detail: { summary: "The account's limit of concurrent flow-controlled deliveries, and how many run now" },
    });
}
