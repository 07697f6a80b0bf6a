import { DIALECTS, type Dialect } from "../core/dialect.ts";
import { canonicalHeaderName } from "../util/canonical-header.ts";

/**
 * The other dialect's marker on a request, if any: one of its configuration headers (telemetry
 * headers aside) or its token parameter. Such a request would otherwise be half understood, e.g.
 * `Upstash-Retries` silently ignored by a server speaking `Svc-` (README.md, Choosing a dialect).
 */
export function otherDialectMarker(dialect: Dialect, headers: Headers, url: string): string | undefined {
  const other = DIALECTS[dialect.name === "svc" ? "upstash" : "svc"];
  const telemetry = `${other.lowerPrefix}telemetry-`;
  let found: string | undefined;
  headers.forEach((_, name) => {
    const lower = name.toLowerCase();
    if (!found && lower.startsWith(other.lowerPrefix) && !lower.startsWith(telemetry)) found = canonicalHeaderName(name);
  });
  if (found) return `header ${found}`;
  const q = url.indexOf("?");
  if (q >= 0 && url.includes(other.tokenQueryParam, q) && new URLSearchParams(url.slice(q + 1)).has(other.tokenQueryParam)) return `query parameter ${other.tokenQueryParam}`;
  return undefined;
}

/** The answer to a request in the other dialect: what was found and how to serve it. */
export function otherDialectError(dialect: Dialect, marker: string): string {
  return dialect.name === "svc"
    ? `${marker} belongs to the hosted service's dialect, but this server runs the svc dialect (${dialect.prefix}-* headers, ${dialect.tokenQueryParam}): start svcd with --dialect upstash to serve the hosted service's official clients`
    : `${marker} belongs to the svc dialect, but this server runs the upstash dialect (${dialect.prefix}-* headers, ${dialect.tokenQueryParam}): start svcd with --dialect svc (the default) to speak Svc-* headers`;
}
