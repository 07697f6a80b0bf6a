import { expect, test } from "bun:test";
import { DEFAULT_PLANS } from "../../src/config/plans.ts";
import { DIALECTS } from "../../src/core/dialect.ts";
import { HttpError } from "../../src/core/errors.ts";
import { ConfigSource } from "../../src/messages/config-source.ts";
import { parseFlowControlValue, parsePublishOptions } from "../../src/messages/options.ts";

const NOW = 1_700_000_000_000;
const payg = DEFAULT_PLANS.payg;

function parse(headers: Record<string, string>, query = "", opts: { defaults?: Record<string, string>; plan?: typeof payg; dialect?: "svc" | "upstash" } = {}) {
  const src = new ConfigSource(DIALECTS[opts.dialect ?? "svc"], new Headers(headers), new URLSearchParams(query), new Headers(opts.defaults));
  return parsePublishOptions(src, opts.plan ?? payg, NOW);
}
function refusal(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, message: error.message };
    throw error;
  }
  throw new Error("accepted");
}

test("nothing given: POST, now, three retries, no callbacks, no headers but the content type", () => {
  const o = parse({ "content-type": "text/plain" });
  expect(o).toMatchObject({ method: "POST", delayMs: 0, retries: 3, contentBasedDeduplication: false, headers: [["Content-Type", "text/plain"]] });
  for (const field of ["notBefore", "timeoutMs", "callback", "failureCallback", "flow", "labels", "queueName", "deduplicationId", "retryDelayExpr"])
    expect(o[field as keyof typeof o]).toBeUndefined();
});

test("every setting from its header; the same from the lowercase query parameter", () => {
  const settings = {
    "Svc-Method": "put",
    "Svc-Delay": "1m30s",
    "Svc-Retries": "5",
    "Svc-Retry-Delay": "1000 * retried",
    "Svc-Timeout": "20s",
    "Svc-Deduplication-Id": "order-7",
    "Svc-Queue-Name": "orders",
  };
  const fromHeaders = parse(settings);
  const fromQuery = parse({}, new URLSearchParams(Object.entries(settings).map(([k, v]) => [k.toLowerCase(), v])).toString());
  for (const o of [fromHeaders, fromQuery]) {
    expect(o).toMatchObject({
      method: "PUT",
      delayMs: 90_000,
      retries: 5,
      retryDelayExpr: "1000 * retried",
      timeoutMs: 20_000,
      deduplicationId: "order-7",
      queueName: "orders",
    });
  }
});

test("precedence: header, then query parameter, then the URL Group's defaults", () => {
  expect(parse({ "Svc-Retries": "1" }, "svc-retries=2", { defaults: { "Svc-Retries": "4" } }).retries).toBe(1);
  expect(parse({}, "svc-retries=2", { defaults: { "Svc-Retries": "4" } }).retries).toBe(2);
  expect(parse({}, "", { defaults: { "Svc-Retries": "4" } }).retries).toBe(4);
});

test("a bare number of delay or timeout is seconds; Not-Before is Unix seconds", () => {
  expect(parse({ "Svc-Delay": "90" }).delayMs).toBe(90_000);
  expect(parse({ "Svc-Timeout": "15" }).timeoutMs).toBe(15_000);
  expect(parse({ "Svc-Not-Before": String(NOW / 1000 + 60) }).notBefore).toBe(NOW + 60_000);
});

test("forwarded headers: Svc-Forward-* with the prefix stripped, and all but transport and credentials with Header-Forward", () => {
  expect(parse({ "Svc-Forward-X-Trace": "abc" }).headers).toEqual([["X-Trace", "abc"]]);
  const all = parse({ "Svc-Header-Forward": "true", "X-Custom": "1", Authorization: "Bearer t", "Svc-Retries": "1" }).headers;
  expect(all).toEqual([["X-Custom", "1"]]);
});

test("callbacks carry their own settings, defaulting to POST", () => {
  const o = parse({
    "Svc-Callback": "https://cb.example/done",
    "Svc-Callback-Retries": "2",
    "Svc-Failure-Callback": "https://cb.example/failed",
    "Svc-Failure-Callback-Method": "PUT",
    "Svc-Failure-Callback-Forward-X-Why": "because",
  });
  expect(o.callback).toMatchObject({ url: "https://cb.example/done", method: "POST", retries: 2, headers: [] });
  expect(o.failureCallback).toMatchObject({ url: "https://cb.example/failed", method: "PUT", headers: [["X-Why", "because"]] });
});

test("flow control: key and value together; any subset of parallelism, rate and period", () => {
  expect(parse({ "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "parallelism=2, rate=10, period=1m" }).flow).toEqual({
    key: "k",
    parallelism: 2,
    rate: 10,
    periodMs: 60_000,
  });
  expect(parseFlowControlValue("rate=5", "V")).toEqual({ rate: 5, periodMs: 1000 });
  expect(refusal(() => parse({ "Svc-Flow-Control-Key": "k" })).message).toBe("Svc-Flow-Control-Key needs Svc-Flow-Control-Value");
  expect(refusal(() => parse({ "Svc-Flow-Control-Value": "rate=1" })).message).toBe("Svc-Flow-Control-Value needs Svc-Flow-Control-Key");
  expect(refusal(() => parseFlowControlValue("period=1m", "V")).message).toContain("give rate and/or parallelism");
  expect(refusal(() => parseFlowControlValue("rate=0", "V")).message).toContain("rate must be a positive integer");
});

test("bad values are 400 naming the header and the value", () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ "Svc-Method": "FETCH" }, 'invalid Svc-Method "FETCH": must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS'],
    [{ "Svc-Retries": "-1" }, 'invalid Svc-Retries "-1": must be a non-negative integer'],
    [{ "Svc-Delay": "soon" }, 'invalid Svc-Delay "soon"'],
    [{ "Svc-Not-Before": "tomorrow" }, 'invalid Svc-Not-Before "tomorrow": must be a Unix time in seconds'],
    [{ "Svc-Callback": "ftp://x.example" }, 'invalid Svc-Callback "ftp://x.example": the scheme must be http or https'],
    [{ "Svc-Retry-Delay": "1000 *" }, 'invalid Svc-Retry-Delay "1000 *"'],
    [{ "Svc-Deduplication-Id": "a:b" }, 'invalid Svc-Deduplication-Id: 1-256 characters, no ":"'],
    [{ "Svc-Content-Based-Deduplication": "maybe" }, 'invalid Svc-Content-Based-Deduplication "maybe": must be true or false'],
    [{ "Svc-Queue-Name": "a b" }, 'invalid Svc-Queue-Name "a b"'],
  ];
  for (const [headers, message] of cases) {
    const r = refusal(() => parse(headers));
    expect(r.status).toBe(400);
    expect(r.message).toStartWith(message);
  }
});

test("values above the plan's limits are 412, naming the limit", () => {
  const free = DEFAULT_PLANS.free;
  expect(refusal(() => parse({ "Svc-Retries": "4" }, "", { plan: free }))).toEqual({
    status: 412,
    message: "Svc-Retries 4 is above the plan's limit: the plan allows at most 3",
  });
  expect(refusal(() => parse({ "Svc-Delay": "8d" }, "", { plan: free }))).toEqual({
    status: 412,
    message: `Svc-Delay "8d" is above the plan's limit of 7d`,
  });
  expect(refusal(() => parse({ "Svc-Not-Before": String(NOW / 1000 + 8 * 86400) }, "", { plan: free })).status).toBe(412);
  // Without a header the default retries follow the plan.
  expect(parse({}, "", { plan: { ...free, maxRetries: 1 } }).retries).toBe(1);
});

test("the upstash dialect reads Upstash-* and the svc headers mean nothing to it", () => {
  const o = parse({ "Upstash-Retries": "2", "Svc-Retries": "9" }, "", { dialect: "upstash" });
  expect(o.retries).toBe(2);
});
