import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import type { FlowControlService } from "./service.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent } from "../openapi/doc.ts";
import { EMPTY_OK, FlowControlJson, GlobalParallelismJson } from "../messages/api-schemas.ts";

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

/**
 * `/v2/flowControl` and `/v2/globalParallelism` (docs/messaging-api.md, Flow control).
 * Actions answer 200 with an empty body.
 */
export function flowControlRoutes(ctx: AppContext, flow: FlowControlService) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/flowControl", ({ account, query }) => flow.list(account, query.search || undefined), {
      query: Type.Object({ search: Type.Optional(Type.String({ description: "only keys whose name contains this, ignoring case" })) }, { additionalProperties: true }),
      detail: apiDoc({ summary: "List flow-control keys", responses: { 200: jsonContent(Type.Array(FlowControlJson), "every key of the account, or those matching `search`") } }),
    })
    .get("/v2/flowControl/:key", ({ account, params }) => flow.get(account, params.key), {
      params: KeyParams,
      detail: apiDoc({ summary: "Live counters and settings of one flow-control key", responses: { 200: jsonContent(FlowControlJson, "the key") } }),
    })
    .post("/v2/flowControl/:key/pause", ({ account, params }) => flow.pause(account, params.key).then(done), {
      params: KeyParams,
      detail: apiDoc({ summary: "Pause a flow-control key: its messages wait until resume", responses: { 200: EMPTY_OK } }),
    })
    .post("/v2/flowControl/:key/resume", ({ account, params }) => flow.resume(account, params.key).then(done), {
      params: KeyParams,
      detail: apiDoc({ summary: "Resume a paused flow-control key", responses: { 200: EMPTY_OK } }),
    })
    .post("/v2/flowControl/:key/pin", ({ account, params, query }) => flow.pin(account, params.key, query).then(done), {
      params: KeyParams,
      query: PinQuery,
      detail: apiDoc({ summary: "Fix parallelism, rate and/or period of a key over what its messages carry", responses: { 200: EMPTY_OK } }),
    })
    .post("/v2/flowControl/:key/unpin", ({ account, params, query }) => flow.unpin(account, params.key, query).then(done), {
      params: KeyParams,
      query: UnpinQuery,
      detail: apiDoc({ summary: "Remove pinned parallelism and/or rate", responses: { 200: EMPTY_OK } }),
    })
    .post("/v2/flowControl/:key/resetRate", ({ account, params }) => flow.resetRate(account, params.key).then(done), {
      params: KeyParams,
      detail: apiDoc({ summary: "Start a new rate period now (rate count 0)", responses: { 200: EMPTY_OK } }),
    })
    .get("/v2/globalParallelism", ({ account }) => flow.globalParallelism(account), {
      detail: apiDoc({
        summary: "The account's limit of concurrent flow-controlled deliveries, and how many run now",
        responses: { 200: jsonContent(GlobalParallelismJson, "the limit and the count") },
      }),
    });
}
