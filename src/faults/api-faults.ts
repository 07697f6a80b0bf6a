import type { AccountRegistry } from "../accounts/accounts.ts";
import type { Clock } from "../core/clock.ts";
import type { Dialect } from "../core/dialect.ts";
import { HttpError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { authenticateMessaging } from "../http/auth.ts";
import { errorResponse } from "../http/errors.ts";
import { pathOf } from "../http/fast-route.ts";
import type { FaultRule } from "./model.ts";
import { rateLimitHeaders } from "./rate-limit-headers.ts";
import type { FaultRules } from "./rules.ts";

const DAY_MS = 86_400_000;
const DEFAULT_LIMITS = { burst: 100, daily: 500 };
const DEFAULT_QUOTA_TEXT = "daily message quota exceeded: the plan's limit of messages a day is reached";
/** Names the fault on every injected answer, so a client's logs show it was not the service. */
export const FAULT_HEADER = "Svcd-Injected-Fault";

export interface ApiFaultDeps {
  rules: FaultRules;
  accounts: AccountRegistry;
  dialect: Dialect;
  clock: Clock;
  log: Logger;
}

/**
 * What the HTTP app asks before it routes a request: an injected answer, or undefined to go on.
 * Only the messaging API (`/v2/...`) with a valid token is matched; the control plane, the console
 * and the docs never are, so a test can always remove the rule that blocks it. A slow fault waits
 * on the server's clock and then lets the request through.
 */
export function apiFaults(deps: ApiFaultDeps): (request: Request) => Promise<Response | undefined> | undefined {
  return (request) => {
    if (deps.rules.empty) return undefined;
    const path = pathOf(request.url);
    if (!path.startsWith("/v2/")) return undefined;
    let accountId: string;
    try {
      accountId = authenticateMessaging(deps.accounts, deps.dialect, request).id;
    } catch {
      return undefined; // the route answers the 401 itself
    }
    const rule = deps.rules.forRequest(accountId, { path, method: request.method });
    if (!rule) return undefined;
    deps.log.info("injected fault", { fault: rule.kind, faultRule: rule.id, account: accountId, method: request.method, path });
    if (rule.kind === "slow") {
      const clock = deps.clock;
      return new Promise((resolve) => clock.at(clock.now() + (rule.delayMs ?? 0), () => resolve(undefined)));
    }
    return Promise.resolve(answer(rule, deps.clock.now(), path, deps.log));
  };
}

function answer(rule: FaultRule, nowMs: number, path: string, log: Logger): Response {
  const marker = { [FAULT_HEADER]: `${rule.kind}; rule=${rule.id}` };
  switch (rule.kind) {
    case "rate-limit": {
      const scope = rule.scope ?? "burst";
      const resetAt = scope === "burst" ? nowMs + 1000 : (Math.floor(nowMs / DAY_MS) + 1) * DAY_MS;
      const headers = { ...rateLimitHeaders(scope, rule.limit ?? DEFAULT_LIMITS[scope], 0, resetAt), ...marker };
      const text = scope === "burst" ? "Exceeded burst rate limit" : "Exceeded daily rate limit";
      return errorResponse(new HttpError(429, text, headers), path, log);
    }
    case "quota":
      return errorResponse(new HttpError(412, rule.message ?? DEFAULT_QUOTA_TEXT, marker), path, log);
    default: {
      const status = rule.status ?? 500;
      const text = status === 503 ? "service unavailable (injected fault)" : "internal error (injected fault)";
      return errorResponse(new HttpError(status, text, marker), path, log);
    }
  }
}
