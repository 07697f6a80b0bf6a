import { Elysia, t } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { HttpError, unavailable } from "../core/errors.ts";
import { messagingAuth } from "../http/auth.ts";
import type { ClockControl } from "./clock-control.ts";
import { withDeadline } from "../core/deadline.ts";
import type { ResetRegistry } from "./reset.ts";
import { Type } from "@sinclair/typebox";
import { apiDoc, jsonContent } from "../openapi/doc.ts";

export interface HealthDeps {
  /** Set once the store is open, config and fixtures are loaded and the listeners are bound. */
  ready: () => boolean;
  /** Why the server is not ready although it runs (e.g. recovery waits for storage), or null. */
  notReadyReason: () => string | null;
  /** A cheap query, so a closed or broken database makes the server not ready. */
  probeStore: () => void;
  /** A round trip to every delivery worker. */
  pingWorkers: () => Promise<unknown>;
}

const WORKER_PING_MS = 2_000;

/**
 * Liveness and readiness need no credentials: orchestrators probe them without a token, and they
 * tell nothing about any account.
 */
export function healthRoutes(deps: HealthDeps) {
  return new Elysia()
    .get(
      "/__svc/health",
      ({ set }) => {
        if (!deps.ready()) {
          set.status = 503;
          return { status: "starting" };
        }
        return { status: "ok" };
      },
      {
        detail: apiDoc({
          summary: "Liveness: the process answers (no credentials)",
          security: [],
          responses: { 200: jsonContent(StatusJson, "ok"), 503: jsonContent(StatusJson, "starting") },
        }),
      },
    )
    .get(
      "/__svc/ready",
      async () => {
        if (!deps.ready()) throw unavailable("not ready: starting");
        const reason = deps.notReadyReason();
        if (reason) throw unavailable(`not ready: ${reason}`);
        try {
          deps.probeStore();
        } catch (error) {
          throw unavailable(`not ready: store: ${(error as Error).message}`);
        }
        if (!(await withDeadline(deps.pingWorkers(), WORKER_PING_MS))) throw unavailable("not ready: delivery workers do not answer");
        return { status: "ready" };
      },
      {
        detail: apiDoc({
          summary: "Readiness: store open and recovered, config and fixtures loaded, delivery workers answering (no credentials)",
          security: [],
          responses: { 200: jsonContent(StatusJson, "ready") },
        }),
      },
    );
}

export interface ControlDeps {
  resets: ResetRegistry;
  /** Time control, and the wait for deliveries that flush shares with it. */
  clock: ClockControl;
  /** Processes sharing the storage now: the controls act on one process's state, so they need it alone. */
  nodes?: () => number;
}

/** Reset, flush and time control see and move one process: with several sharing the storage they refuse. */
function requireOneNode(deps: ControlDeps): void {
  const nodes = deps.nodes?.() ?? 1;
  if (nodes > 1)
    throw new HttpError(409, `the test double's controls (reset, flush, clock) work with one node; ${nodes} nodes share this database`);
}

/**
 * Reset, flush and clock advance as the control routes (and the MCP tools) run them; they throw
 * HttpErrors (409 with several nodes or a real clock, 504 when deliveries still run at the timeout).
 */
export function controlActions(deps: ControlDeps) {
  return {
    async reset(accountId: string) {
      requireOneNode(deps);
      return { reset: accountId, parts: await deps.resets.resetAccount(accountId) };
    },
    async flush(timeoutMs = DEFAULT_WAIT_MS) {
      requireOneNode(deps);
      if (!(await deps.clock.flush(timeoutMs))) throw new HttpError(504, `deliveries still running after ${timeoutMs} ms`);
      return { idle: true as const };
    },
    async advance(move: { ms?: number; to?: number }, flush = false, timeoutMs = DEFAULT_WAIT_MS) {
      requireOneNode(deps);
      const result = await deps.clock.advance({ ms: move.ms, to: move.to, flush, timeoutMs });
      if (!result.idle)
        throw new HttpError(504, `clock moved to ${result.now}, but deliveries still running after ${timeoutMs} ms`);
      const { idle: _, ...answer } = result;
      return answer;
    },
  };
}

const StatusJson = Type.Object({ status: Type.String() });
const ResetJson = Type.Object({ reset: Type.String({ description: "the account id" }), parts: Type.Array(Type.String()) });
const ClockJson = Type.Object({ now: Type.Integer({ description: "Unix ms" }), mode: Type.Union([Type.Literal("real"), Type.Literal("manual")]) });
const ErrorJson = Type.Object({ error: Type.String() });

const DEFAULT_WAIT_MS = 10_000;
const MAX_WAIT_MS = 600_000;
const WaitQuery = t.Object({
  timeout: t.Optional(t.Numeric({ minimum: 1, maximum: MAX_WAIT_MS, description: `ms to wait (default ${DEFAULT_WAIT_MS})` })),
});
const AdvanceQuery = t.Object({
  flush: t.Optional(t.BooleanString({ description: "after each fired timer, wait until deliveries are idle" })),
  timeout: WaitQuery.properties.timeout,
});
const AdvanceBody = t.Object(
  {
    ms: t.Optional(t.Integer({ minimum: 0, description: "move forward by this many ms" })),
    to: t.Optional(t.Integer({ minimum: 0, description: "move to this Unix time in ms" })),
  },
  { additionalProperties: false, description: 'exactly one of "ms" or "to"' },
);

/**
 * The test-double control plane under `/__svc/`, authenticated with a messaging token: reset of the
 * caller's account, flush, and time control.
 */
export function controlRoutes(ctx: AppContext, deps: ControlDeps) {
  const actions = controlActions(deps);
  return new Elysia()
    .use(messagingAuth(ctx.accounts, ctx.dialect))
    .post(
      "/__svc/reset",
      ({ account }) => actions.reset(account.id),
      {
        detail: apiDoc({
          summary: "Wipe the caller's messages, DLQ, logs, groups, schedules, queues and statistics (not its credentials)",
          responses: { 200: jsonContent(ResetJson, "the account and the parts that were wiped") },
        }),
      },
    )
    .post(
      "/__svc/flush",
      ({ query }) => actions.flush(query.timeout),
      {
        query: WaitQuery,
        detail: apiDoc({
          summary: "Deliver everything due now; answer once nothing is due or in flight",
          responses: { 200: jsonContent(Type.Object({ idle: Type.Literal(true) }), "idle"), 504: jsonContent(ErrorJson, "still running at the timeout") },
        }),
      },
    )
    .get("/__svc/clock", () => deps.clock.status(), {
      detail: apiDoc({ summary: "The server's time and clock mode", responses: { 200: jsonContent(ClockJson, "now and the mode") } }),
    })
    .post(
      "/__svc/clock/advance",
      ({ body, query }) => actions.advance(body, query.flush, query.timeout),
      {
        // JSON whatever the Content-Type: `curl -d '{"ms":1000}'` sends it as a form.
        parse: "json",
        body: AdvanceBody,
        query: AdvanceQuery,
        detail: apiDoc({
          summary: "Move a manual clock forward, firing every due timer in time order",
          responses: {
            200: jsonContent(Type.Composite([ClockJson, Type.Object({ timersFired: Type.Integer() })]), "the new time"),
            409: jsonContent(ErrorJson, "the clock is real"),
            504: jsonContent(ErrorJson, "moved, but deliveries still running at the timeout"),
          },
        }),
      },
    );
}
