import { bearer } from "@elysiajs/bearer";
import { Elysia } from "elysia";
import type { Account, AccountRegistry, TokenAccess } from "../accounts/accounts.ts";
import { HttpError } from "../core/errors.ts";
import type { Dialect } from "../core/dialect.ts";
import { otherDialectError, otherDialectMarker } from "./dialect-guard.ts";
import { pathOf } from "./fast-route.ts";

/**
 * Messaging routes: `Authorization: Bearer <token>` or the dialect's token query parameter. A
 * request in the other dialect is refused first, with the flag that serves it (400).
 */
export function messagingAuth(accounts: AccountRegistry, dialect: Dialect) {
  return new Elysia()
    .use(bearer({ extract: { header: "Bearer", query: dialect.tokenQueryParam } }))
    // Async: counting a request against the burst limit may ask the storage (Elysia awaits only an async derive).
    .derive({ as: "scoped" }, async ({ bearer, request, query }) => {
      const { account, readOnly } = messagingAccess(accounts, dialect, request, bearer);
      // Derive runs before validation: a route's strict query schema must not see the token as an
      // unknown field (`?svc_token=` works on every messaging route, not only on those without one).
      delete (query as Record<string, unknown>)[dialect.tokenQueryParam];
      const derived = { account, readOnly };
      // Only a limited plan pays for reading the path; counting a request may ask the storage.
      if (isLimited(account)) await accounts.admit(account, request.method, pathOf(request.url));
      return derived;
    });
}

/** The account a messaging request acts for (`token` as the bearer plugin extracts it), or the 400/401. */
export function messagingAccount(accounts: AccountRegistry, dialect: Dialect, request: Request, token: string | undefined): Account {
  return messagingAccess(accounts, dialect, request, token).account;
}

/** As `messagingAccount`, saying whether the token is read-only (a read-only token may only read: 403 otherwise). */
function messagingAccess(accounts: AccountRegistry, dialect: Dialect, request: Request, token: string | undefined): TokenAccess {
  const marker = otherDialectMarker(dialect, request.headers, request.url);
  if (marker) throw new HttpError(400, otherDialectError(dialect, marker));
  const access = token ? accounts.byAnyToken(token) : undefined;
  if (!access) throw new HttpError(401, "Unauthorized");
  if (access.readOnly && !READS.has(request.method)) throw new HttpError(403, readOnlyRefusal(request));
  return access;
}

const isLimited = ({ limits }: Account) => Number.isFinite(limits.burstPerSecond) || Number.isFinite(limits.maxMessagesPerDay);

/** What a read-only token may do: read. Every other method publishes, changes or deletes. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

function readOnlyRefusal(request: Request): string {
  const path = new URL(request.url).pathname;
  return `read-only token: ${request.method} ${path.slice(0, 80)} publishes, changes or deletes; use the account's token`;
}


/**
 * The account of a messaging request Bun serves before Elysia, reading the token as the bearer
 * plugin does: the Authorization header when it starts with `Bearer`, else the first value of the
 * dialect's token query parameter. Counts nothing against the plan's limits.
 */
export function authenticateMessaging(accounts: AccountRegistry, dialect: Dialect, request: Request): Account {
  return messagingAccount(accounts, dialect, request, bearerToken(request, dialect.tokenQueryParam));
}

/** `messagingAuth` for a publishing route Bun serves before Elysia (see FastRoute): authenticated and admitted. */
export function authenticatePublishing(accounts: AccountRegistry, dialect: Dialect, request: Request): Account {
  const account = authenticateMessaging(accounts, dialect, request);
  accounts.admitPublish(account);
  return account;
}

function bearerToken(request: Request, queryParam: string): string | undefined {
  const authorization = request.headers.get("authorization");
  if (authorization?.startsWith("Bearer")) return authorization.slice("Bearer".length + 1);
  const url = request.url;
  const q = url.indexOf("?");
  if (q < 0 || !url.includes(queryParam, q)) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get(queryParam) || undefined;
}

const BASIC_CHALLENGE = { "www-authenticate": 'Basic realm="svcd management API"' };

/** Parses `Authorization: Basic base64(email:apiKey)`; null when absent or malformed. */
export function parseBasic(header: string | undefined | null): { user: string; password: string } | null {
  if (!header || !/^basic /i.test(header)) return null;
  let decoded: string;
  try {
    decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Management routes: HTTP Basic with the account's email and API key. */
export function managementAuth(accounts: AccountRegistry) {
  return new Elysia().derive({ as: "scoped" }, ({ headers }): { account: Account } => {
    const basic = parseBasic(headers.authorization);
    const account = basic ? accounts.byBasic(basic.user, basic.password) : undefined;
    if (!account) throw new HttpError(401, "Unauthorized", BASIC_CHALLENGE);
    return { account };
  });
}
