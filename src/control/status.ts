import { Elysia } from "elysia";
import pkg from "../../package.json" with { type: "json" };
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import type { MessageCensus } from "../messages/storage.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent } from "../openapi/doc.ts";

export interface StatusDeps {
  messageCounts(accountId: string, nowMs: number): MessageCensus | Promise<MessageCensus>;
  /** Claimed messages the delivery workers hold back for a flow-control limit or a pause. */
  heldByWorkers(accountId: string): Promise<number>;
  dlqCount(accountId: string): number | Promise<number>;
}

/**
 * The store counts a message a worker holds for its flow-control key as claimed, like one whose
 * attempt runs; a user reads it as waiting, so the workers' count moves it there.
 */
export function withWorkerHeld(census: MessageCensus, held: number): MessageCensus {
  const moved = Math.min(held, census.inFlight);
  return { ...census, inFlight: census.inFlight - moved, waiting: census.waiting + moved };
}

const Count = Type.Integer({ minimum: 0 });
const StatusJson = Type.Object({
  version: Type.String(),
  userId: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  dialect: Type.String(),
  headerPrefix: Type.String(),
  clock: Type.Object({ mode: Type.String(), now: Type.Integer({ description: "Unix ms" }) }),
  messages: Type.Object({ due: Count, delayed: Count, inFlight: Count, waiting: Count }),
  dlq: Count,
  readOnly: Type.Boolean({ description: "the token is a read-only token: it may read, not publish, change or delete" }),
});

/**
 * `GET /__svc/status`: who the token belongs to, how this server speaks (dialect, header prefix,
 * clock) and what the account has in flight right now. The console's live view reads it; a test
 * suite can wait on it too.
 */
export function statusRoutes(ctx: AppContext, deps: StatusDeps) {
  return new Elysia().use(messagingAuth(ctx.accounts, ctx.dialect)).get(
    "/__svc/status",
    async ({ account, readOnly }) => {
      const now = ctx.clock.now();
      return {
        version: pkg.version,
        userId: account.id,
        email: account.email,
        plan: account.plan,
        dialect: ctx.dialect.name,
        headerPrefix: ctx.dialect.prefix,
        clock: { mode: ctx.clock.kind, now },
        messages: withWorkerHeld(await deps.messageCounts(account.id, now), await deps.heldByWorkers(account.id)),
        dlq: await deps.dlqCount(account.id),
        readOnly,
      };
    },
    {
      detail: apiDoc({
        summary: "The caller's account, the server's dialect and clock, and live message counts",
        responses: { 200: jsonContent(StatusJson, "the account and the server") },
      }),
    },
  );
}
