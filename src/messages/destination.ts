import { badRequest } from "../core/errors.ts";
import type { Dialect } from "../core/dialect.ts";

export type Destination = { kind: "url"; url: string } | { kind: "group"; name: string };

/**
 * Splits what follows `/v2/publish/` into the destination and the publish request's query:
 * configuration keys (`svc-*`, the token) stay with the request, every other key belongs to the
 * destination URL and is kept in order, byte for byte.
 */
export function parseDestination(rawPathAndQuery: string, dialect: Dialect): { destination: Destination; query: URLSearchParams } {
  const q = rawPathAndQuery.indexOf("?");
  let target = q >= 0 ? rawPathAndQuery.slice(0, q) : rawPathAndQuery;
  const rawQuery = q >= 0 ? rawPathAndQuery.slice(q + 1) : "";
  const configPieces: string[] = [];
  const destinationPieces: string[] = [];
  for (const piece of rawQuery.split("&")) {
    if (!piece) continue;
    const key = safeDecode(piece.split("=", 1)[0]!).toLowerCase();
    if (key === dialect.tokenQueryParam || key.startsWith(dialect.lowerPrefix)) configPieces.push(piece);
    else destinationPieces.push(piece);
  }
  const query = new URLSearchParams(configPieces.join("&"));

  if (/^https?%3a/i.test(target)) target = safeDecode(target);
  if (/^https?:/i.test(target)) {
    // Some clients and proxies collapse `//` after the scheme inside a path.
    const normalized = target.replace(/^(https?):\/(?!\/)/i, "$1://");
    let url: URL;
    try {
      url = new URL(normalized);
    } catch {
      throw badRequest(`invalid destination url: "${target.slice(0, 200)}" is not a valid URL`);
    }
    if (!url.hostname) throw badRequest(`invalid destination url: "${target.slice(0, 200)}" has no host`);
    const base = normalized;
    const full = destinationPieces.length ? `${base}${base.includes("?") ? "&" : "?"}${destinationPieces.join("&")}` : base;
    return { destination: { kind: "url", url: full }, query };
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(target))
    throw badRequest(`invalid destination url: "${target.slice(0, 200)}": the scheme must be http or https`);
  const name = safeDecode(target);
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(name) || name === "." || name === "..")
    throw badRequest(`invalid destination url: "${name.slice(0, 200)}" is neither an http(s) URL nor a URL Group name`);
  return { destination: { kind: "group", name }, query };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
