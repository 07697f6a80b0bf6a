import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { apiDoc, jsonContent } from "../openapi/doc.ts";
import { FaultRuleInputJson, FaultRuleJson } from "./model.ts";
import type { FaultRules } from "./rules.ts";

const ErrorJson = Type.Object({ error: Type.String() });

/** `/__svc/faults`: the caller's fault rules (docs/test-double.md, Fault injection). */
export function faultRoutes(ctx: AppContext, rules: FaultRules) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/__svc/faults", ({ account }) => ({ rules: rules.list(account.id) }), {
      detail: apiDoc({
        summary: "The caller's fault rules, in the order they are tried, with their counters",
        responses: { 200: jsonContent(Type.Object({ rules: Type.Array(FaultRuleJson) }), "the rules") },
      }),
    })
    .post(
      "/__svc/faults",
      async ({ account, body, set }) => {
        const rule = await ctx.commit.run((tx) => rules.add(tx, account.id, body));
        set.status = 201;
        return rule;
      },
      {
        // JSON whatever the Content-Type: `curl -d '{...}'` sends it as a form.
        parse: "json",
        body: FaultRuleInputJson,
        detail: apiDoc({
          summary: "Add a fault rule: deliveries or API answers it matches fail as the rule says",
          responses: {
            201: jsonContent(FaultRuleJson, "the rule, with its id and seed"),
            400: jsonContent(ErrorJson, "an invalid rule"),
          },
        }),
      },
    )
    .delete(
      "/__svc/faults",
      async ({ account }) => ({ deleted: await ctx.commit.run((tx) => rules.clear(tx, account.id)) }),
      {
        detail: apiDoc({
          summary: "Remove every fault rule of the caller",
          responses: { 200: jsonContent(Type.Object({ deleted: Type.Integer() }), "how many were removed") },
        }),
      },
    )
    .delete(
      "/__svc/faults/:id",
      async ({ account, params }) => {
        await ctx.commit.run((tx) => rules.remove(tx, account.id, params.id));
        return { deleted: 1 };
      },
      {
        detail: apiDoc({
          summary: "Remove one fault rule",
          responses: {
            200: jsonContent(Type.Object({ deleted: Type.Literal(1) }), "removed"),
            404: jsonContent(ErrorJson, "no such rule"),
          },
        }),
      },
    );
}
