import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { ConfigSource } from "../messages/config-source.ts";
import { parsePublishOptions } from "../messages/options.ts";
import { headerPairs, toHeaders } from "../util/header-pairs.ts";
import type { Write } from "../store/transactor.ts";
import type { UrlGroupService } from "./service.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent } from "../openapi/doc.ts";
import { EMPTY_OK, UrlGroupJson } from "../messages/api-schemas.ts";

const GroupParams = t.Object({ name: t.String() });
const EndpointList = t.Object({
  endpoints: t.Array(t.Object({ url: t.Optional(t.String()), name: t.Optional(t.String()) })),
});
// `headers` (name → string or list of strings) is checked by the service: Elysia would coerce a
// string into an object of its characters before a Record schema saw it.
const DefaultHeaders = t.Object({ headers: t.Unknown() });

/** `/v2/topics`: URL Groups (docs/messaging-api.md, URL Groups). Actions answer 200 with an empty body. */
export function urlGroupRoutes(ctx: AppContext, groups: UrlGroupService) {
  const write = (fn: Write<void>) => ctx.commit.run(fn).then(() => new Response(null, { status: 200 }));
  const now = () => ctx.clock.now();
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post(
      "/v2/topics/:name/endpoints",
      ({ account, params, body }) => write((tx) => groups.addEndpoints(tx, account, params.name, body.endpoints, now())),
      { params: GroupParams, body: EndpointList, detail: apiDoc({ summary: "Add endpoints to a URL Group (creates it)", responses: { 200: EMPTY_OK } }) },
    )
    .delete(
      "/v2/topics/:name/endpoints",
      ({ account, params, body }) => write((tx) => groups.removeEndpoints(tx, account, params.name, body.endpoints, now())),
      { params: GroupParams, body: EndpointList, detail: apiDoc({ summary: "Remove endpoints; the group goes with its last one", responses: { 200: EMPTY_OK } }) },
    )
    .get("/v2/topics", ({ account }) => groups.list(account), { detail: apiDoc({ summary: "List URL Groups", responses: { 200: jsonContent(Type.Array(UrlGroupJson), "every URL Group") } }) })
    .get("/v2/topics/:name", ({ account, params }) => groups.get(account, params.name), {
      params: GroupParams,
      detail: apiDoc({ summary: "Get a URL Group", responses: { 200: jsonContent(UrlGroupJson, "the URL Group") } }),
    })
    .delete("/v2/topics/:name", ({ account, params }) => write((tx) => groups.delete(tx, account, params.name)), {
      params: GroupParams,
      detail: apiDoc({ summary: "Delete a URL Group", responses: { 200: EMPTY_OK } }),
    })
    .patch(
      "/v2/topics/:name",
      ({ account, params, body }) => {
        // The defaults join every later publish to the group: refuse now (400) what would make
        // each of those publishes, and the group's schedule triggers, fail.
        if (body.headers !== undefined) {
          const defaults = toHeaders(headerPairs(body.headers, "headers"));
          parsePublishOptions(new ConfigSource(ctx.dialect, new Headers(), new URLSearchParams(), defaults), account.limits, ctx.clock.now());
        }
        return write((tx) => groups.setDefaultHeaders(tx, account, params.name, body.headers, now()));
      },
      { params: GroupParams, body: DefaultHeaders, detail: apiDoc({ summary: "Set the default headers of a URL Group", responses: { 200: EMPTY_OK } }) },
    );
}
