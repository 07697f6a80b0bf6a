import { Elysia } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";

/** `GET /v2/keys` and `POST /v2/keys/rotate` (fidelity.md §3). */
export function signingKeyRoutes(ctx: AppContext) {
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .get("/v2/keys", ({ account }) => ({ current: account.currentSigningKey, next: account.nextSigningKey }))
    .post("/v2/keys/rotate", ({ account }) => ctx.accounts.rotateKeys(account));
}
