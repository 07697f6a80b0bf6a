/** How long to wait before the next delivery attempt. */

const ONE_DAY_MS = 86_400_000;

/**
 * Default delay before retry `retryNumber` (1 for the first retry): min(1 day, e^(2.5·n)) seconds,
 * i.e. 12 s, 2 m 28 s, 30 m 8 s, 6 h 7 m, then 24 h. Values below 1 are treated as the first retry.
 */
export function defaultBackoffMs(retryNumber: number): number {
  const n = Number.isFinite(retryNumber) ? Math.max(1, retryNumber) : 1;
  return Math.round(Math.min(ONE_DAY_MS, Math.exp(2.5 * n) * 1000));
}

/** Checked in this order; the first that yields a usable delay wins. */
const HEADER_NAMES = ["retry-after", "x-ratelimit-reset", "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"];

/** Integers above this are read as Unix timestamps in seconds (2001-09-09 onward), not delays. */
const UNIX_TIMESTAMP_THRESHOLD = 1e9;

/**
 * The delay a failed answer asks for, from its rate-limit headers, in ms. Undefined when none is
 * present, parseable, and at most one day: such hints are then ignored and the normal backoff applies.
 */
export function retryAfterFromHeaders(headers: Headers | Record<string, string>, nowMs: number): number | undefined {
  for (const name of HEADER_NAMES) {
    const raw = headerValue(headers, name);
    if (raw === undefined) continue;
    const ms = parseHint(raw.trim(), name === "x-ratelimit-reset", nowMs);
    if (ms !== undefined && ms <= ONE_DAY_MS) return ms;
  }
  return undefined;
}

function headerValue(headers: Headers | Record<string, string>, lowerName: string): string | undefined {
  if (headers instanceof Headers) return headers.get(lowerName) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === lowerName) return value;
  }
  return undefined;
}

function parseHint(value: string, mayBeTimestamp: boolean, nowMs: number): number | undefined {
  if (/^\d+$/.test(value)) {
    const n = Number(value);
    if (mayBeTimestamp && n > UNIX_TIMESTAMP_THRESHOLD) return Math.max(0, n * 1000 - nowMs);
    return n * 1000;
  }
  if (/^\d+\.\d+$/.test(value)) return Math.round(Number(value) * 1000);
  return parseGoDuration(value) ?? parseHttpDate(value, nowMs);
}

const GO_UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.Duration text (`6m5s`, `1.5s`, `500ms`, `1h2m3.5s`), as sent by several LLM APIs. */
function parseGoDuration(value: string): number | undefined {
  if (!/^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.test(value)) return undefined;
  let total = 0;
  for (const [, num = "", unit = ""] of value.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(num) * (GO_UNIT_MS[unit] ?? 0);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

const IMF_FIXDATE = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850_DATE = /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME_DATE = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/** Only the three HTTP-date forms: Date.parse alone would also accept text like "1" as a year. */
function parseHttpDate(value: string, nowMs: number): number | undefined {
  let text: string;
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) text = value;
  else if (ASCTIME_DATE.test(value)) text = `${value} GMT`; // asctime carries no zone but means GMT
  else return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
