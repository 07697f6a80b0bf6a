import { expect } from "bun:test";

type Api = (path: string, init?: RequestInit & { token?: string | null }) => Promise<Response>;

/** `POST /__svc/flush`: resolves once the server reports nothing due and nothing in flight. */
export async function flush(api: Api, opts: { token?: string; timeoutMs?: number } = {}) {
  const q = opts.timeoutMs ? `?timeout=${opts.timeoutMs}` : "";
  const res = await api(`/__svc/flush${q}`, { method: "POST", token: opts.token });
  expect(res.status).toBe(200);
}

/** `POST /__svc/clock/advance`; `flush` waits for deliveries after every fired timer. */
export async function advance(api: Api, by: { ms: number } | { to: number }, opts: { flush?: boolean } = {}) {
  const res = await api(`/__svc/clock/advance${opts.flush ? "?flush=true" : ""}`, {
    method: "POST",
    body: JSON.stringify(by),
    headers: { "content-type": "application/json" },
  });
  const body = (await res.json()) as { now: number; mode: string; timersFired: number; error?: string };
  if (res.status !== 200) throw new Error(`advance answered ${res.status}: ${body.error}`);
  return body;
}

export const json = (value: unknown) => ({ method: "POST", body: JSON.stringify(value), headers: { "content-type": "application/json" } });
