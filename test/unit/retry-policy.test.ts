import { expect, test } from "bun:test";
import { defaultBackoffMs } from "../../src/delivery/backoff.ts";
import { decideAfterAttempt, describeOutcome, type AttemptContext } from "../../src/delivery/retry-policy.ts";
import type { DeliveryOutcome } from "../../src/model/outcome.ts";

const NOW = 1_700_000_000_000;
const ctx = (over: Partial<AttemptContext> = {}): AttemptContext => ({
  retried: 0,
  maxRetries: 3,
  nonRetryableHeader: "Svc-NonRetryable-Error",
  delayScale: 1,
  nowMs: NOW,
  ...over,
});
const answer = (status: number, headers: Array<[string, string]> = []): DeliveryOutcome => ({
  ticket: 1,
  messageId: "msg",
  status,
  headers,
  startedAt: NOW,
  durationMs: 3,
});
const noAnswer = (error: string): DeliveryOutcome => ({ ticket: 1, messageId: "msg", error, startedAt: NOW, durationMs: 3 });

test("every 2XX is delivered, whatever the retries left", () => {
  for (const status of [200, 201, 204, 299]) expect(decideAfterAttempt(answer(status), ctx({ retried: 3 }))).toEqual({ kind: "delivered" });
});

test("any other answer or no answer is retried after the default backoff while retries are left", () => {
  expect(decideAfterAttempt(answer(500), ctx())).toEqual({ kind: "retry", at: NOW + defaultBackoffMs(1), error: "the destination answered 500" });
  expect(decideAfterAttempt(answer(302), ctx({ retried: 2 }))).toEqual({ kind: "retry", at: NOW + defaultBackoffMs(3), error: "the destination answered 302" });
  expect(decideAfterAttempt(noAnswer("connection refused"), ctx())).toEqual({ kind: "retry", at: NOW + defaultBackoffMs(1), error: "connection refused" });
});

test("the last retry used: failed, with what went wrong", () => {
  expect(decideAfterAttempt(answer(503), ctx({ retried: 3, maxRetries: 3 }))).toEqual({ kind: "failed", error: "the destination answered 503" });
  expect(decideAfterAttempt(noAnswer("timeout after 1000 ms"), ctx({ maxRetries: 0 }))).toEqual({ kind: "failed", error: "timeout after 1000 ms" });
});

test("489 with the non-retryable header fails at once; 489 without it, or the header on another status, retries", () => {
  const header: Array<[string, string]> = [["Svc-NonRetryable-Error", "TRUE"]];
  expect(decideAfterAttempt(answer(489, header), ctx())).toEqual({ kind: "failed", error: "the destination answered 489 with a non-retryable error" });
  expect(decideAfterAttempt(answer(489), ctx()).kind).toBe("retry");
  expect(decideAfterAttempt(answer(500, header), ctx()).kind).toBe("retry");
});

test("the receiver's Retry-After wins over the message's expression and the default", () => {
  const d = decideAfterAttempt(answer(429, [["Retry-After", "7"]]), ctx({ retryDelayExpr: "1000" }));
  expect(d).toEqual({ kind: "retry", at: NOW + 7000, error: "the destination answered 429" });
});

test("a retry delay expression is evaluated with the number of retries so far", () => {
  expect(decideAfterAttempt(answer(500), ctx({ retried: 2, retryDelayExpr: "1000 * (1 + retried)" }))).toMatchObject({ at: NOW + 3000 });
  expect(decideAfterAttempt(noAnswer("reset"), ctx({ retryDelayExpr: "250" }))).toMatchObject({ at: NOW + 250 });
});

test("the server-wide delay scale shrinks every delay (tests), rounded to whole ms", () => {
  expect(decideAfterAttempt(answer(500), ctx({ delayScale: 0 }))).toMatchObject({ at: NOW });
  expect(decideAfterAttempt(answer(500), ctx({ delayScale: 0.001 }))).toMatchObject({ at: NOW + Math.round(defaultBackoffMs(1) * 0.001) });
});

test("an outcome is described by its status or by its error", () => {
  expect(describeOutcome(answer(404))).toBe("the destination answered 404");
  expect(describeOutcome(noAnswer("DNS lookup failed"))).toBe("DNS lookup failed");
  expect(describeOutcome({ ticket: 1, messageId: "m", startedAt: 0, durationMs: 0 })).toBe("no answer");
});
