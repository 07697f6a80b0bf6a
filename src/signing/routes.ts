import { Elysia } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { apiDoc, jsonContent } from "../openapi/doc.ts";
import { SigningKeysJson } from "../messages/api-schemas.ts";

/** `GET /v2/keys` and `POST /v2/keys/rotate` (docs/messaging-api.md, Signatures). */
export function signingKeyRoutes(ctx: AppContext) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/keys", ({ account }) => ({ current: account.currentSigningKey, next: account.nextSigningKey }), {
      detail: apiDoc({ summary: "The signing keys of deliveries", responses: { 200: jsonContent(SigningKeysJson, "current and next") } }),
    })
    // A write like any other: durable before the answer, and (on a shared engine) told to the other processes.
    .post("/v2/keys/rotate", ({ account }) => ctx.commit.run((tx) => ctx.accounts.rotateKeys(tx, account)), {
      detail: apiDoc({
        summary: "Rotate the signing keys: next becomes current, a new next is made",
        responses: { 200: jsonContent(SigningKeysJson, "the keys after the rotation") },
      }),
    });
}
