import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { consistencyProblems, storedMessages } from "../helpers/inspect.ts";
import { rawRequest } from "../helpers/raw-tcp.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Malformed requests across every route: each answers 4xx with `{"error": "..."}` and leaves no
 * trace in any list. A few are refused by Bun's HTTP parser before svcd sees them (CR, LF, NUL in
 * a header, too many or too large headers): Bun answers those with a bare 400 or 431, which the
 * table marks `parser`, and nothing is stored either.
 */

const ACCOUNT = { email: "bad@input.io", apiKey: "bad-input-key", userId: "bad-input-user", token: "bad-input-token", plan: "free" as const };
const DEST = "http://127.0.0.1:9/target";
const MB = 1024 * 1024;

let s: TestServer;
let port: number;
let searchId: string;
let vectorId: string;
let before: Awaited<ReturnType<typeof managementSnapshot>>;

beforeAll(async () => {
  s = await startTestServer({ configFile: { accounts: [ACCOUNT] } });
  port = Number(new URL(s.url).port);
  const search = await s.mgmt("/v2/search", jsonBody("POST", { name: "products", region: "eu-west-1", type: "payg" }));
  expect(search.status).toBe(200);
  searchId = ((await search.json()) as { id: string }).id;
  const vector = await s.mgmt(
    "/v2/vector/index",
    jsonBody("POST", { name: "embeddings", region: "us-central1", similarity_function: "COSINE", dimension_count: 8 }),
  );
  expect(vector.status).toBe(200);
  vectorId = ((await vector.json()) as { id: string }).id;
  const group = await s.api("/v2/topics/existing/endpoints", { method: "POST", ...json({ endpoints: [{ name: "e1", url: "http://127.0.0.1:9/e1" }] }) });
  expect(group.status).toBe(200);
  expect((await s.api("/v2/queues", { method: "POST", ...json({ queueName: "existing-q", parallelism: 1 }) })).status).toBe(200);
  before = await managementSnapshot();
  beforeMessaging = await messagingSnapshot();
});

/** Every list of the messaging API that bad input could have added to. */
async function messagingSnapshot() {
  const get = async (path: string) => (await s.api(path)).json();
  return {
    topics: await get("/v2/topics"),
    schedules: await get("/v2/schedules"),
    queues: await get("/v2/queues"),
    flowControl: await get("/v2/flowControl"),
    keys: await get("/v2/keys"),
  };
}
let beforeMessaging: Awaited<ReturnType<typeof messagingSnapshot>>;
afterAll(() => s.stop());

function json(body: unknown): { headers: Record<string, string>; body: string } {
  return { headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) };
}
const jsonBody = (method: string, body: unknown): RequestInit => ({ method, ...json(body) });

/** Index lists without the throughput series, which move with time. */
async function managementSnapshot() {
  const strip = (list: Array<Record<string, unknown>>) => list.map(({ throughput_vector: _, ...rest }) => rest);
  const search = (await (await s.mgmt("/v2/search")).json()) as Array<Record<string, unknown>>;
  const vector = (await (await s.mgmt("/v2/vector/index")).json()) as Array<Record<string, unknown>>;
  return { search: strip(search), vector: strip(vector) };
}

type Api = "messaging" | "management" | "none";
interface Case {
  name: string;
  method: string;
  path: string | (() => string);
  api?: Api;
  headers?: Record<string, string>;
  body?: BodyInit | (() => BodyInit);
  /** A specific 4xx, when one is decided (412 for plan limits, 405 for methods, 401 for credentials). */
  status?: number;
}

const publish = (name: string, headers: Record<string, string>, extra: Partial<Case> = {}): Case => ({
  name: `publish: ${name}`,
  method: "POST",
  path: `/v2/publish/${DEST}`,
  headers,
  body: "payload",
  ...extra,
});

const CASES: Case[] = [
  // Destinations: broken URLs and schemes, bad group names.
  { name: "destination with ftp scheme", method: "POST", path: "/v2/publish/ftp://example.com/x", body: "x" },
  { name: "destination javascript: URL", method: "POST", path: "/v2/publish/javascript:alert(1)", body: "x" },
  { name: "destination http:// without host", method: "POST", path: "/v2/publish/http://", body: "x" },
  { name: "destination with a space in the host", method: "POST", path: "/v2/publish/http://exa%20mple.com/", body: "x" },
  { name: "destination with a bad port", method: "POST", path: "/v2/publish/http://127.0.0.1:99999/x", body: "x" },
  { name: "destination name with /", method: "POST", path: "/v2/publish/not/a/url", body: "x" },
  { name: "destination name ..", method: "POST", path: "/v2/publish/%2E%2E", body: "x" },
  { name: "destination name with unicode", method: "POST", path: `/v2/publish/${encodeURIComponent("grüße")}`, body: "x" },
  { name: "destination name of 300 characters", method: "POST", path: `/v2/publish/${"n".repeat(300)}`, body: "x" },
  { name: "destination group that does not exist", method: "POST", path: "/v2/publish/no-such-group", body: "x", status: 404 },
  // Numbers: negative, huge, not numbers.
  publish("retries not a number", { "Svc-Retries": "lots" }),
  publish("negative retries", { "Svc-Retries": "-1" }),
  publish("retries of 30 digits", { "Svc-Retries": "9".repeat(30) }),
  publish("retries above the plan's cap", { "Svc-Retries": "4" }, { status: 412 }),
  publish("retries as a query parameter", {}, { path: `/v2/publish/${DEST}?svc-retries=abc` }),
  // Durations.
  publish("delay with an unknown unit", { "Svc-Delay": "10x" }),
  publish("negative delay", { "Svc-Delay": "-5s" }),
  publish("delay too large to represent", { "Svc-Delay": `${"9".repeat(25)}d` }),
  publish("delay above the plan's maximum", { "Svc-Delay": "8d" }, { status: 412 }),
  publish("delay in milliseconds", { "Svc-Delay": "500ms" }),
  publish("not-before that is a date", { "Svc-Not-Before": "2030-01-01" }),
  publish("negative not-before", { "Svc-Not-Before": "-1" }),
  publish("not-before beyond the plan's maximum delay", { "Svc-Not-Before": "99999999999" }, { status: 412 }),
  publish("timeout with days", { "Svc-Timeout": "1d" }),
  publish("timeout above the plan's maximum", { "Svc-Timeout": "16m" }, { status: 412 }),
  publish("timeout not a duration", { "Svc-Timeout": "soon" }),
  // Expressions and enumerations.
  publish("unknown method", { "Svc-Method": "FETCH" }),
  publish("retry delay with a missing parenthesis", { "Svc-Retry-Delay": "pow(2, retried" }),
  publish("retry delay calling a host function", { "Svc-Retry-Delay": "process.exit(1)" }),
  publish("retry delay with an unknown variable", { "Svc-Retry-Delay": "attempts * 1000" }),
  publish("retry delay of 10,000 characters", { "Svc-Retry-Delay": "1+".repeat(5000) + "1" }),
  publish("header-forward not a boolean", { "Svc-Header-Forward": "maybe" }),
  publish("content-based dedup not a boolean", { "Svc-Content-Based-Deduplication": "yes" }),
  publish("deduplication id with a colon", { "Svc-Deduplication-Id": "a:b" }),
  publish("label of 300 characters", { "Svc-Label": "l".repeat(300) }),
  publish("queue name with /", { "Svc-Queue-Name": "a/b" }),
  publish("queue name ..", { "Svc-Queue-Name": ".." }),
  // Callbacks.
  publish("callback that is not a URL", { "Svc-Callback": "not a url" }),
  publish("callback with ftp scheme", { "Svc-Callback": "ftp://example.com/x" }),
  publish("failure callback ::", { "Svc-Failure-Callback": "::" }),
  publish("callback retries above the cap", { "Svc-Callback": "http://127.0.0.1:9/cb", "Svc-Callback-Retries": "99" }, { status: 412 }),
  publish("callback method BREW", { "Svc-Callback": "http://127.0.0.1:9/cb", "Svc-Callback-Method": "BREW" }),
  publish("callback delay not a duration", { "Svc-Callback": "http://127.0.0.1:9/cb", "Svc-Callback-Delay": "later" }),
  publish("failure callback timeout in days", { "Svc-Failure-Callback": "http://127.0.0.1:9/f", "Svc-Failure-Callback-Timeout": "2d" }),
  // Flow control.
  publish("flow-control value without key", { "Svc-Flow-Control-Value": "rate=1" }),
  publish("flow-control key without value", { "Svc-Flow-Control-Key": "k" }),
  publish("flow-control rate not a number", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "rate=fast" }),
  publish("flow-control rate 0", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "rate=0" }),
  publish("flow-control negative parallelism", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "parallelism=-1" }),
  publish("flow-control unknown period", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "rate=1, period=1fortnight" }),
  publish("flow-control period above a week", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "rate=1, period=8d" }),
  publish("flow-control unknown setting", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "burst=5" }),
  publish("flow-control key with a space", { "Svc-Flow-Control-Key": "a b", "Svc-Flow-Control-Value": "rate=1" }),
  // Forwarded header values with CR, LF, NUL (the query form reaches svcd; the header form is below, raw).
  publish("forwarded header value with CR LF (query)", {}, { path: `/v2/publish/${DEST}?svc-forward-x=a%0D%0AInjected:%20yes` }),
  publish("forwarded header value with NUL (query)", {}, { path: `/v2/publish/${DEST}?svc-forward-x=a%00b` }),
  publish("callback-forwarded value with LF (query)", { "Svc-Callback": "http://127.0.0.1:9/cb" }, {
    path: `/v2/publish/${DEST}?svc-callback-forward-x=a%0Ab`,
  }),
  publish("forwarded header name with a space (query)", {}, { path: `/v2/publish/${DEST}?svc-forward-a%20b=1` }),
  publish("forwarded header value with DEL", { "Svc-Forward-X": "a\u007fb" }),
  publish("label with a control character (query)", {}, { path: `/v2/publish/${DEST}?svc-label=a%01b` }),
  // Size.
  publish("body one byte over the plan's limit", {}, { body: () => new Uint8Array(MB + 1), status: 412 }),
  publish("streamed body over the limit", {}, {
    status: 412,
    body: () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 24; i++) controller.enqueue(new Uint8Array(128 * 1024));
          controller.close();
        },
      }),
  }),
  // Wrong methods.
  { name: "GET on publish", method: "GET", path: `/v2/publish/${DEST}`, status: 405 },
  { name: "PUT on a message", method: "PUT", path: "/v2/messages/msg_x", status: 405 },
  { name: "PATCH on the DLQ", method: "PATCH", path: "/v2/dlq", status: 405 },
  { name: "POST on the logs", method: "POST", path: "/v2/logs", status: 405 },
  { name: "DELETE on the keys", method: "DELETE", path: "/v2/keys", status: 405 },
  { name: "an unknown route", method: "GET", path: "/v2/nothing-here", status: 404 },
  // Lists and bulk operations.
  { name: "logs count 0", method: "GET", path: "/v2/logs?count=0" },
  { name: "logs count above the maximum", method: "GET", path: "/v2/logs?count=100000" },
  { name: "logs count negative", method: "GET", path: "/v2/logs?count=-1" },
  { name: "logs unknown state", method: "GET", path: "/v2/logs?state=BOGUS" },
  { name: "logs cursor not a number", method: "GET", path: "/v2/events?cursor=abc" },
  { name: "logs cursor of 30 digits", method: "GET", path: `/v2/events?cursor=${"9".repeat(30)}` },
  { name: "logs fromDate not a number", method: "GET", path: "/v2/logs?fromDate=yesterday" },
  { name: "DLQ count above 100", method: "GET", path: "/v2/dlq?count=101" },
  { name: "DLQ responseStatus not a number", method: "GET", path: "/v2/dlq?responseStatus=abc" },
  { name: "a DLQ id that does not exist", method: "GET", path: "/v2/dlq/1-0", status: 404 },
  { name: "a DLQ id with ../", method: "GET", path: "/v2/dlq/..%2F..%2Fetc%2Fpasswd", status: 404 },
  { name: "a message id of 10,000 characters", method: "GET", path: `/v2/messages/msg_${"x".repeat(10_000)}`, status: 404 },
  { name: "cancel with invalid JSON", method: "DELETE", path: "/v2/messages", ...json("{") },
  { name: "cancel with a JSON array", method: "DELETE", path: "/v2/messages", ...json(["msg_x"]) },
  { name: "cancel with messageIds a number", method: "DELETE", path: "/v2/messages", ...json({ messageIds: 5 }) },
  { name: "cancel with count 0", method: "DELETE", path: "/v2/messages?count=0" },
  { name: "DLQ delete with invalid JSON", method: "DELETE", path: "/v2/dlq", ...json("{\"dlqIds\": [") },
  { name: "DLQ delete with numeric ids", method: "DELETE", path: "/v2/dlq", ...json({ dlqIds: [1, 2] }) },
  { name: "DLQ bulk retry with invalid JSON", method: "POST", path: "/v2/dlq/retry", ...json("nope") },
  { name: "DLQ retry with a bad retries header", method: "POST", path: "/v2/dlq/retry/1-0", headers: { "Svc-Retries": "x" } },
  // Credentials.
  { name: "publish without credentials", method: "POST", path: `/v2/publish/${DEST}`, api: "none", body: "x", status: 401 },
  { name: "publish with a wrong token", method: "POST", path: `/v2/publish/${DEST}`, api: "none", headers: { authorization: "Bearer nope" }, body: "x", status: 401 },
  { name: "publish with a wrong svc_token", method: "POST", path: `/v2/publish/${DEST}?svc_token=nope`, api: "none", body: "x", status: 401 },
  { name: "management with garbage Basic", method: "GET", path: "/v2/search", api: "none", headers: { authorization: "Basic %%%" }, status: 401 },
  { name: "management with a messaging token", method: "GET", path: "/v2/search", api: "none", headers: { authorization: `Bearer ${ACCOUNT.token}` }, status: 401 },
  // Management API: periods, bodies, names.
  { name: "messaging stats unknown period", method: "GET", path: `/v2/svc/stats/${ACCOUNT.userId}?period=2h`, api: "management" },
  { name: "messaging stats period in capitals", method: "GET", path: `/v2/svc/stats/${ACCOUNT.userId}?period=1H`, api: "management" },
  { name: "vector stats unknown period", method: "GET", path: () => `/v2/vector/index/${vectorId}/stats?period=forever`, api: "management" },
  { name: "create search index with invalid JSON", method: "POST", path: "/v2/search", api: "management", ...json("{name") },
  { name: "create search index with an empty object", method: "POST", path: "/v2/search", api: "management", ...json({}) },
  { name: "create search index with a JSON array", method: "POST", path: "/v2/search", api: "management", ...json([1]) },
  { name: "create search index with a numeric name", method: "POST", path: "/v2/search", api: "management", ...json({ name: 5, region: "eu-west-1", type: "payg" }) },
  { name: "create search index named with /", method: "POST", path: "/v2/search", api: "management", ...json({ name: "a/b", region: "eu-west-1", type: "payg" }) },
  { name: "create search index named ..", method: "POST", path: "/v2/search", api: "management", ...json({ name: "../x", region: "eu-west-1", type: "payg" }) },
  { name: "create search index with a unicode name", method: "POST", path: "/v2/search", api: "management", ...json({ name: "índice", region: "eu-west-1", type: "payg" }) },
  { name: "create search index with a 500-character name", method: "POST", path: "/v2/search", api: "management", ...json({ name: "n".repeat(500), region: "eu-west-1", type: "payg" }) },
  { name: "create search index in an unknown region", method: "POST", path: "/v2/search", api: "management", ...json({ name: "x", region: "mars-1", type: "payg" }) },
  { name: "create search index with an unknown field", method: "POST", path: "/v2/search", api: "management", ...json({ name: "x", region: "eu-west-1", type: "payg", admin: true }) },
  { name: "create vector index with negative dimensions", method: "POST", path: "/v2/vector/index", api: "management", ...json({ name: "v", region: "eu-west-1", similarity_function: "COSINE", dimension_count: -1 }) },
  { name: "create vector index with a huge dimension count", method: "POST", path: "/v2/vector/index", api: "management", ...json({ name: "v", region: "eu-west-1", similarity_function: "COSINE", dimension_count: 1e12 }) },
  { name: "create vector index with dimensions as text", method: "POST", path: "/v2/vector/index", api: "management", ...json({ name: "v", region: "eu-west-1", similarity_function: "COSINE", dimension_count: "8" }) },
  { name: "create vector index with an unknown similarity", method: "POST", path: "/v2/vector/index", api: "management", ...json({ name: "v", region: "eu-west-1", similarity_function: "HAMMING", dimension_count: 8 }) },
  { name: "rename search index to an empty name", method: "POST", path: () => `/v2/search/${searchId}/rename`, api: "management", ...json({ name: "" }) },
  { name: "rename vector index with a null name", method: "POST", path: () => `/v2/vector/index/${vectorId}/rename`, api: "management", ...json({ name: null }) },
  { name: "unknown search index", method: "GET", path: "/v2/search/00000000-0000-0000-0000-000000000000", api: "management", status: 404 },
  { name: "DELETE on the search index list", method: "DELETE", path: "/v2/search", api: "management", status: 405 },
  { name: "PATCH on a search index", method: "PATCH", path: () => `/v2/search/${searchId}`, api: "management", status: 405 },
  // URL Groups (the free plan allows one group: "existing").
  { name: "group name with unicode", method: "POST", path: `/v2/topics/${encodeURIComponent("grüße")}/endpoints`, ...json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] }) },
  { name: "group name with /", method: "POST", path: "/v2/topics/a%2Fb/endpoints", ...json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] }) },
  { name: "group name of 300 characters", method: "POST", path: `/v2/topics/${"g".repeat(300)}/endpoints`, ...json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] }) },
  { name: "group name .. (normalised away: no such route)", method: "POST", path: "/v2/topics/%2E%2E/endpoints", ...json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] }), status: 404 },
  { name: "a second group on a one-group plan", method: "POST", path: "/v2/topics/another/endpoints", ...json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] }), status: 412 },
  { name: "101 endpoints in a group", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: Array.from({ length: 101 }, (_, i) => ({ url: `http://127.0.0.1:9/${i}` })) }), status: 412 },
  { name: "group endpoints with invalid JSON", method: "POST", path: "/v2/topics/existing/endpoints", ...json("{") },
  { name: "group endpoints not an array", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: "http://127.0.0.1:9/x" }) },
  { name: "group endpoints empty", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: [] }) },
  { name: "group endpoint with ftp scheme", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: [{ url: "ftp://x/y" }] }) },
  { name: "group endpoint that is not a URL", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: [{ url: "not a url" }] }) },
  { name: "group endpoint without url", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: [{}] }) },
  { name: "group endpoint url as a number", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: [{ url: 5 }] }) },
  { name: "group endpoint name with /", method: "POST", path: "/v2/topics/existing/endpoints", ...json({ endpoints: [{ url: "http://127.0.0.1:9/x", name: "a/b" }] }) },
  { name: "remove endpoints of an unknown group", method: "DELETE", path: "/v2/topics/nope/endpoints", ...json({ endpoints: [{ name: "e1" }] }), status: 404 },
  { name: "group default header with CR LF", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: { "X-A": "a\r\nInjected: 1" } }) },
  { name: "group default header with NUL", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: { "X-A": "a\u0000b" } }) },
  { name: "group default header name with a space", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: { "X A": "b" } }) },
  { name: "group default headers as a string", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: "Svc-Retries: 1" }) },
  { name: "group default header value a number", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: { "Svc-Retries": 1 } }) },
  { name: "group default retries that no publish could use", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: { "Svc-Retries": "abc" } }) },
  { name: "group default delay beyond the plan", method: "PATCH", path: "/v2/topics/existing", ...json({ headers: { "Svc-Delay": "30d" } }) },
  { name: "group default headers missing", method: "PATCH", path: "/v2/topics/existing", ...json({}) },
  { name: "PUT on a group", method: "PUT", path: "/v2/topics/existing", status: 405 },
  // Schedules.
  { name: "schedule with minute 61", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "61 * * * *" } },
  { name: "schedule with three cron fields", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "* * *" } },
  { name: "schedule with words for a cron", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "every day" } },
  { name: "schedule without a cron", method: "POST", path: `/v2/schedules/${DEST}` },
  { name: "schedule whose cron never fires (February 31st)", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "0 0 31 2 *" } },
  { name: "schedule in an unknown time zone", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "CRON_TZ=Mars/Olympus * * * * *" } },
  { name: "schedule id with /", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "a/b" } },
  { name: "schedule id of 300 characters", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "s".repeat(300) } },
  { name: "schedule with bad retries", method: "POST", path: `/v2/schedules/${DEST}`, headers: { "Svc-Cron": "* * * * *", "Svc-Retries": "abc" } },
  { name: "schedule to an ftp URL", method: "POST", path: "/v2/schedules/ftp://x/y", headers: { "Svc-Cron": "* * * * *" } },
  { name: "schedule to an unknown group", method: "POST", path: "/v2/schedules/no-group", headers: { "Svc-Cron": "* * * * *" }, status: 404 },
  { name: "an unknown schedule", method: "GET", path: "/v2/schedules/scd_nope", status: 404 },
  { name: "pause an unknown schedule", method: "PATCH", path: "/v2/schedules/scd_nope/pause", status: 404 },
  // Queues and enqueue.
  { name: "queue without a name", method: "POST", path: "/v2/queues", ...json({}) },
  { name: "queue name with /", method: "POST", path: "/v2/queues", ...json({ queueName: "a/b" }) },
  { name: "queue name with unicode", method: "POST", path: "/v2/queues", ...json({ queueName: "qü" }) },
  { name: "queue parallelism -1", method: "POST", path: "/v2/queues", ...json({ queueName: "q", parallelism: -1 }) },
  { name: "queue parallelism above the plan", method: "POST", path: "/v2/queues", ...json({ queueName: "q", parallelism: 1e9 }), status: 412 },
  { name: "queue paused as text", method: "POST", path: "/v2/queues", ...json({ queueName: "q", paused: "yes" }) },
  { name: "queue with invalid JSON", method: "POST", path: "/v2/queues", ...json("nope") },
  { name: "an unknown queue", method: "GET", path: "/v2/queues/nope", status: 404 },
  { name: "resume an unknown queue", method: "POST", path: "/v2/queues/nope/resume", status: 404 },
  { name: "enqueue to a queue named with /", method: "POST", path: `/v2/enqueue/a%2Fb/${DEST}`, body: "x" },
  { name: "enqueue without a destination", method: "POST", path: "/v2/enqueue/existing-q", body: "x" },
  { name: "enqueue to an ftp URL", method: "POST", path: "/v2/enqueue/existing-q/ftp://x/y", body: "x" },
  { name: "enqueue with bad retries", method: "POST", path: `/v2/enqueue/existing-q/${DEST}`, body: "x", headers: { "Svc-Retries": "x" } },
  // Batch (a malformed batch as a whole; element errors are below).
  { name: "batch with invalid JSON", method: "POST", path: "/v2/batch", ...json("[") },
  { name: "batch that is an object", method: "POST", path: "/v2/batch", ...json({ destination: DEST }) },
  { name: "batch of 10,000 messages", method: "POST", path: "/v2/batch", ...json(Array.from({ length: 10_000 }, () => ({ destination: DEST }))) },
  // Flow control.
  { name: "an unknown flow-control key", method: "GET", path: "/v2/flowControl/nope", status: 404 },
  { name: "POST on flow control", method: "POST", path: "/v2/flowControl", status: 405 },
  // Control plane.
  { name: "clock advance by a negative time", method: "POST", path: "/__svc/clock/advance", ...json({ ms: -5 }) },
  { name: "clock advance by text", method: "POST", path: "/__svc/clock/advance", ...json({ ms: "soon" }) },
  { name: "flush with a timeout that is text", method: "POST", path: "/__svc/flush?timeout=abc" },
  { name: "usage report without samples", method: "POST", path: () => `/__svc/usage/vector/${vectorId}`, ...json({ samples: [] }) },
  { name: "usage report with negative queries", method: "POST", path: () => `/__svc/usage/vector/${vectorId}`, ...json({ samples: [{ queries: -1 }] }) },
  { name: "usage report stamped in the future", method: "POST", path: () => `/__svc/usage/vector/${vectorId}`, ...json({ samples: [{ queries: 1, at: 9e15 }] }) },
];

async function send(c: Case): Promise<Response> {
  const path = typeof c.path === "function" ? c.path() : c.path;
  const init: RequestInit = {
    method: c.method,
    headers: c.headers,
    body: typeof c.body === "function" ? c.body() : c.body,
  };
  if ((c.api ?? "messaging") === "messaging") return s.api(path, init);
  if (c.api === "management") return s.mgmt(path, init);
  return fetch(s.url + path, init);
}

async function expectJsonError(res: Response, c: Pick<Case, "status">) {
  const text = await res.text();
  if (c.status) expect(res.status).toBe(c.status);
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(typeof body.error).toBe("string");
  expect((body.error as string).length).toBeGreaterThan(3);
  expect(body.error as string).not.toMatch(/\n\s+at /);
  return body.error as string;
}

describe("malformed requests answer 4xx {\"error\"}", () => {
  test("the table has at least 60 cases", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
  });
  for (const c of CASES) {
    test(c.name, async () => {
      await expectJsonError(await send(c), c);
    });
  }
});

/** A raw HTTP/1.1 request to svcd with the account's token. */
function rawPublish(extraHeaders: string, body = "x", target = `/v2/publish/${DEST}`) {
  return (
    `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ACCOUNT.token}\r\n` +
    `Content-Length: ${body.length}\r\n${extraHeaders}\r\n${body}`
  );
}

const forwardedHeaders = (n: number) => Array.from({ length: n }, (_, i) => `Svc-Forward-H${i}: v${i}\r\n`).join("");

describe("raw requests fetch refuses to send", () => {
  const parserCases: Array<[string, string, number]> = [
    ["CR in a forwarded header value", "Svc-Forward-X: a\rb\r\n", 400],
    ["LF in a forwarded header value", "Svc-Forward-X: a\nb\r\n", 400],
    ["NUL in a forwarded header value", "Svc-Forward-X: a\u0000b\r\n", 400],
    ["a control character in a forwarded header value", "Svc-Forward-X: a\u0001b\r\n", 400],
    ["a header name with a space", "Svc-Forward-A B: x\r\n", 400],
    ["10,000 headers", forwardedHeaders(10_000), 431],
    ["a 200 KB header", `Svc-Forward-X: ${"a".repeat(200_000)}\r\n`, 431],
  ];
  for (const [name, headers, status] of parserCases) {
    test(`${name}: refused by the HTTP parser with ${status}`, async () => {
      const res = await rawRequest(port, rawPublish(headers));
      expect(res.status).toBe(status);
    });
  }

  test("DEL in a forwarded header value reaches svcd and is refused with 400 {\"error\"}", async () => {
    const res = await rawRequest(port, rawPublish("Svc-Forward-X: a\u007fb\r\n"));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ error: expect.stringContaining("Svc-Forward-") });
  });

  const declared = (bytes: number) =>
    `POST /v2/publish/${DEST} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ACCOUNT.token}\r\n` +
    `Content-Length: ${bytes}\r\n\r\n` +
    "only the first bytes";

  test("a declared 100 MB body is refused with 412 {\"error\"} before any more of it is sent", async () => {
    const res = await rawRequest(port, declared(100 * MB));
    expect(res.status).toBe(412);
    expect(JSON.parse(res.body).error).toContain("too large");
  });

  test("a declared 10 GB body: Bun's own request limit (128 MB) answers 413 before svcd", async () => {
    const res = await rawRequest(port, declared(10 * 1024 ** 3));
    expect(res.status).toBe(413);
  });

  test("an endless chunked body is refused with 412 while it is still being sent", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x62);
    const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
    let sent = 0;
    const head =
      `POST /v2/publish/${DEST} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ACCOUNT.token}\r\n` +
      "Transfer-Encoding: chunked\r\n\r\n";
    const res = await rawRequest(port, head, {
      timeoutMs: 10_000,
      // Never ends on its own: up to 64 MB, far past the 1 MB limit.
      trickle: () => (sent++ < 1024 ? framed : null),
    });
    expect(res.status).toBe(412);
    expect(JSON.parse(res.body).error).toContain("too large");
    // The answer came while the body was still flowing: svcd did not wait for (or keep) all of it.
    expect(res.bytesSent).toBeLessThan(32 * MB);
  });
});

test("batch elements that are malformed each answer {\"error\"} in place and store nothing", async () => {
  const res = await s.api("/v2/batch", {
    method: "POST",
    ...json([
      1,
      { body: "no destination" },
      { destination: "ftp://x/y" },
      { destination: DEST, headers: { "Svc-Forward-X": "a\r\nb" } },
      { destination: DEST, headers: "Svc-Retries: 1" },
      { destination: DEST, headers: { "Svc-Retries": "-1" } },
      { destination: "no-such-group" },
    ]),
  });
  expect(res.status).toBe(200);
  const answers = (await res.json()) as Array<Record<string, unknown>>;
  expect(answers).toHaveLength(7);
  for (const a of answers) {
    expect(Object.keys(a)).toEqual(["error"]);
    expect(typeof a.error).toBe("string");
  }
});

describe("nothing of it left a trace", () => {
  test("no log entry, no DLQ entry, no message, no new or changed index, no usage counted", async () => {
    const logs = (await (await s.api("/v2/logs?count=1000")).json()) as { logs: unknown[] };
    expect(logs.logs).toEqual([]);
    const dlq = (await (await s.api("/v2/dlq")).json()) as { messages: unknown[] };
    expect(dlq.messages).toEqual([]);
    expect(await storedMessages(s)).toBe(0);
    expect(await managementSnapshot()).toEqual(before);
    expect(await messagingSnapshot()).toEqual(beforeMessaging);
    const stats = (await (await s.mgmt(`/v2/svc/stats/${ACCOUNT.userId}`)).json()) as {
      daily_used: Array<{ y: number }>;
      dlq_message_count: number;
    };
    expect(stats.daily_used.reduce((sum, p) => sum + p.y, 0)).toBe(0);
    expect(stats.dlq_message_count).toBe(0);
    expect(await consistencyProblems(s)).toEqual([]);
  });

  test("the server still works", async () => {
    const res = await s.api(`/v2/publish/${DEST}?svc-delay=1h`, { method: "POST", body: "fine", headers: { "Svc-Forward-X": "café" } });
    expect(res.status).toBe(200);
    const { messageId } = (await res.json()) as { messageId: string };
    const view = (await (await s.api(`/v2/messages/${messageId}`)).json()) as { header: Record<string, string[]> };
    expect(view.header["X"]).toEqual(["café"]);
  });
});

