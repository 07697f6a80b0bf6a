import type { RoutePlugin } from "./plugin.ts";
import { HttpError } from "../core/errors.ts";
import { describeProblem, fieldName, problemText, type SchemaProblem } from "../core/validation.ts";
import { isStorageUnavailable } from "../store/errors.ts";
import type { Logger } from "../core/log.ts";

export const jsonError = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: message }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

/**
 * Elysia's validation failure as `<field>: <what is wrong>`. A query value Elysia converts (a
 * number, a boolean) that then breaks a bound is reported without its name: it is found again
 * among the query's values.
 */
function describeValidation(error: unknown, query: Record<string, unknown> | undefined): string {
  const e = error as { type?: string; valueError?: SchemaProblem; value?: unknown };
  const where = e.type ?? "request";
  const problem = e.valueError;
  if (!problem) return `${where}: is not valid`;
  if (where === "property") {
    const name = Object.entries(query ?? {}).find(([, raw]) => typeof raw === "string" && raw !== "" && Number(raw) === e.value)?.[0];
    return `${name ?? "query"}: ${describeProblem(problem)}`;
  }
  return problemText(fieldName("", problem.path) ? "" : where, problem);
}

/**
 * A JSON body sent without its Content-Type (`curl -d` declares a form) is read as a form, and its
 * fields then look missing: the answer says why, so "queueName: is required" is not a riddle.
 */
function notJsonHint(error: unknown, request: Request): string {
  const e = error as { type?: string; value?: unknown };
  if (e.type !== "body") return "";
  // Read as text, or as a form whose one field name is the JSON text.
  const v = e.value;
  const misread = typeof v === "string" || (typeof v === "object" && v !== null && Object.keys(v).some((k) => /^\s*[[{]/.test(k)));
  if (!misread) return "";
  const type = request.headers.get("content-type")?.split(";")[0]?.trim() ?? "";
  return ` (the body was read as ${type || "having no Content-Type"}: send JSON with Content-Type: application/json)`;
}

interface ErrorContext {
  code: unknown;
  error: unknown;
  request: Request;
  path: string;
  query?: Record<string, unknown>;
}

interface RoutePattern {
  method: string;
  regex: RegExp;
}

function compileRoute(path: string): RegExp {
  const pattern = path
    .split("/")
    .map((part) => (part === "*" ? ".*" : part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${pattern}/?$`);
}

/**
 * One mapping of every failure to `{"error": ...}`: validation and parse errors
 * become 400, unknown routes 404, a known path with the wrong method 405, bugs 500 without a stack.
 */
export function installErrorHandling(app: RoutePlugin, log: Logger) {
  let routes: RoutePattern[] | null = null;
  const allowedMethods = (path: string) => {
    routes ??= app.routes.map((r) => ({ method: r.method, regex: compileRoute(r.path) }));
    return [...new Set(routes.filter((r) => r.regex.test(path)).map((r) => r.method))];
  };

  app.onError({ as: "global" }, (context) => {
    // Every error context carries these (the route's, or none for a request no route matched).
    const { code, error, request, path, query } = context;
    const response = mapError({ code, error, request, path: String(path ?? new URL(request.url).pathname), query });
    context.set.status = response.status;
    return response;
  });

  function mapError({ code, error, request, path, query }: ErrorContext): Response {
    if (error instanceof HttpError) return errorResponse(error, path, log);
    switch (code) {
      case "VALIDATION":
        return jsonError(400, describeValidation(error, query) + notJsonHint(error, request));
      case "PARSE":
        return jsonError(400, "invalid request body: malformed JSON or unreadable body");
      case "NOT_FOUND": {
        const methods = allowedMethods(path).filter((m) => m !== "HEAD" && m !== "ALL");
        if (methods.length > 0 && !methods.includes(request.method))
          return jsonError(405, `method ${request.method} not allowed on ${path}`, { allow: methods.join(", ") });
        return jsonError(404, `not found: ${request.method} ${path}`);
      }
      case "INVALID_COOKIE_SIGNATURE":
        return jsonError(400, "invalid cookie");
      default:
        return errorResponse(error, path, log);
    }
  }
}

/**
 * What a route's own failure answers (Elysia's hook above, and the fast routes Bun serves before
 * Elysia): an HttpError as it says, storage that cannot be read or written 503, a bug 500.
 */
export function errorResponse(error: unknown, path: string, log: Logger): Response {
  if (error instanceof HttpError) return jsonError(error.status, error.message, error.headers);
  // SQLite could not read or write (locked past the busy timeout, disk full, I/O error):
  // nothing was stored, and the client may try again.
  if (isStorageUnavailable(error)) {
    log.warn("storage unavailable", { path, code: (error as { code?: unknown }).code, error: (error as Error).message });
    return jsonError(503, `storage unavailable: ${(error as Error).message}`);
  }
  const status = (error as { status?: number }).status;
  if (typeof status === "number" && status >= 400 && status < 500)
    return jsonError(status, (error as Error).message || "bad request");
  log.error("unhandled error", { path, error: String((error as Error)?.stack ?? error) });
  return jsonError(500, "internal error");
}
