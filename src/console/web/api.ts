import { forgetToken, storedToken } from "./token.ts";

/** An answer that was not 2xx: the server's `{"error"}` text and status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type QueryValue = string | number | boolean | undefined | null;
export type Query = Record<string, QueryValue | QueryValue[]>;

export interface Call {
  method?: string;
  query?: Query;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
}

const unauthorizedListeners = new Set<() => void>();
/** Called when the server refuses the token (the console then asks for one). */
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null && v !== "") params.append(key, String(v));
  const text = params.toString();
  return text ? `${path}${path.includes("?") ? "&" : "?"}${text}` : path;
}

/** One call to svcd's own API with the messaging token; every page reads data through here. */
export async function api<T = unknown>(path: string, call: Call = {}): Promise<T> {
  const headers: Record<string, string> = { ...call.headers };
  const token = storedToken();
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (typeof call.body === "string") body = call.body;
  else if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(withQuery(path, call.query), { method: call.method ?? "GET", headers, body });
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    if (res.status === 401) {
      forgetToken();
      for (const fn of unauthorizedListeners) fn();
    }
    const message = (data as { error?: string } | undefined)?.error ?? (typeof data === "string" && data ? data : res.statusText);
    throw new ApiError(res.status, message || `HTTP ${res.status}`);
  }
  // Some actions answer 200 with an empty body; they read as `{}` so callers can tell success.
  return (data ?? {}) as T;
}
