import { describe, expect, test } from "bun:test";
import { defaultBackoffMs, retryAfterFromHeaders } from "../../src/delivery/backoff.ts";

describe("defaultBackoffMs", () => {
  test("e^(2.5 n) seconds, capped at one day", () => {
    expect(defaultBackoffMs(1)).toBe(12_182);
    expect(defaultBackoffMs(2)).toBe(148_413);
    expect(defaultBackoffMs(3)).toBe(1_808_042);
    expect(defaultBackoffMs(4)).toBe(22_026_466);
    expect(defaultBackoffMs(5)).toBe(86_400_000);
    expect(defaultBackoffMs(20)).toBe(86_400_000);
    expect(defaultBackoffMs(1000)).toBe(86_400_000);
  });

  test("is increasing and integral", () => {
    let prev = 0;
    for (let n = 1; n <= 6; n++) {
      const ms = defaultBackoffMs(n);
      expect(Number.isInteger(ms)).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(prev);
      prev = ms;
    }
  });

  test("out-of-range retry numbers behave like the first retry", () => {
    expect(defaultBackoffMs(0)).toBe(12_182);
    expect(defaultBackoffMs(-3)).toBe(12_182);
    expect(defaultBackoffMs(Number.NaN)).toBe(12_182);
  });
});

describe("retryAfterFromHeaders", () => {
  const now = Date.UTC(2024, 0, 1, 12, 0, 0);

  test("integer seconds", () => {
    expect(retryAfterFromHeaders({ "Retry-After": "120" }, now)).toBe(120_000);
    expect(retryAfterFromHeaders({ "Retry-After": "0" }, now)).toBe(0);
    expect(retryAfterFromHeaders({ "Retry-After": " 5 " }, now)).toBe(5_000);
  });

  test("decimal seconds", () => {
    expect(retryAfterFromHeaders({ "retry-after": "1.5" }, now)).toBe(1_500);
  });

  test("HTTP dates in all three forms, relative to now", () => {
    const in90s = new Date(now + 90_000).toUTCString();
    expect(retryAfterFromHeaders({ "Retry-After": in90s }, now)).toBe(90_000);
    expect(retryAfterFromHeaders({ "Retry-After": "Monday, 01-Jan-24 12:00:30 GMT" }, now)).toBe(30_000);
    expect(retryAfterFromHeaders({ "Retry-After": "Mon Jan  1 12:01:00 2024" }, now)).toBe(60_000);
  });

  test("a date in the past means now", () => {
    expect(retryAfterFromHeaders({ "Retry-After": new Date(now - 60_000).toUTCString() }, now)).toBe(0);
  });

  test("Go-style durations", () => {
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-requests": "6m5s" }, now)).toBe(365_000);
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-requests": "1.5s" }, now)).toBe(1_500);
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-requests": "500ms" }, now)).toBe(500);
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-requests": "1h2m3.5s" }, now)).toBe(3_723_500);
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-tokens": "1500us" }, now)).toBe(2);
    expect(retryAfterFromHeaders({ "x-ratelimit-reset-tokens": "0s" }, now)).toBe(0);
  });

  test("X-RateLimit-Reset with a Unix timestamp is absolute", () => {
    const ts = String(now / 1000 + 42);
    expect(retryAfterFromHeaders({ "X-RateLimit-Reset": ts }, now)).toBe(42_000);
    expect(retryAfterFromHeaders({ "X-RateLimit-Reset": String(now / 1000 - 42) }, now)).toBe(0);
    expect(retryAfterFromHeaders({ "X-RateLimit-Reset": "30" }, now)).toBe(30_000);
  });

  test("a timestamp-sized Retry-After is a delay, so over a day and ignored", () => {
    expect(retryAfterFromHeaders({ "Retry-After": String(now / 1000 + 42) }, now)).toBeUndefined();
  });

  test("values above one day are ignored; exactly one day is kept", () => {
    expect(retryAfterFromHeaders({ "Retry-After": "86400" }, now)).toBe(86_400_000);
    expect(retryAfterFromHeaders({ "Retry-After": "86401" }, now)).toBeUndefined();
    expect(retryAfterFromHeaders({ "Retry-After": "25h" }, now)).toBeUndefined();
    expect(retryAfterFromHeaders({ "Retry-After": new Date(now + 2 * 86_400_000).toUTCString() }, now)).toBeUndefined();
  });

  test("absent or unparseable → undefined", () => {
    expect(retryAfterFromHeaders({}, now)).toBeUndefined();
    expect(retryAfterFromHeaders({ "Content-Type": "text/plain" }, now)).toBeUndefined();
    for (const bad of ["", "soon", "-5", "5x", "2024-01-01", "1e3", "Mon, 01 Jan 2024", "1h 2m"]) {
      expect(retryAfterFromHeaders({ "Retry-After": bad }, now)).toBeUndefined();
    }
  });

  test("header order: Retry-After first, then the X-RateLimit-Reset family", () => {
    const all = {
      "X-RateLimit-Reset-Tokens": "4",
      "X-RateLimit-Reset-Requests": "3",
      "X-RateLimit-Reset": "2",
      "Retry-After": "1",
    };
    expect(retryAfterFromHeaders(all, now)).toBe(1_000);
    const { "Retry-After": _a, ...noRetryAfter } = all;
    expect(retryAfterFromHeaders(noRetryAfter, now)).toBe(2_000);
    const { "X-RateLimit-Reset": _b, ...onlyFamily } = noRetryAfter;
    expect(retryAfterFromHeaders(onlyFamily, now)).toBe(3_000);
    expect(retryAfterFromHeaders({ "X-RateLimit-Reset-Tokens": "4" }, now)).toBe(4_000);
  });

  test("an unusable earlier header falls through to the next", () => {
    expect(retryAfterFromHeaders({ "Retry-After": "garbage", "X-RateLimit-Reset": "7" }, now)).toBe(7_000);
    expect(retryAfterFromHeaders({ "Retry-After": "999999", "X-RateLimit-Reset-Requests": "1m" }, now)).toBe(60_000);
  });

  test("accepts a Headers object, case-insensitively", () => {
    const h = new Headers({ "RETRY-AFTER": "9" });
    expect(retryAfterFromHeaders(h, now)).toBe(9_000);
    expect(retryAfterFromHeaders(new Headers({ "x-RateLimit-reset-TOKENS": "2s" }), now)).toBe(2_000);
    expect(retryAfterFromHeaders(new Headers(), now)).toBeUndefined();
  });

  test("record keys are matched case-insensitively", () => {
    expect(retryAfterFromHeaders({ "rEtRy-AfTeR": "3" }, now)).toBe(3_000);
  });
});
