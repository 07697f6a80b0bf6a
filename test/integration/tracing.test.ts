import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tracingFromEnv } from "../../src/config/tracing.ts";
import { startOtlpReceiver, traceparentParts, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Traces over OpenTelemetry with a real OTLP/HTTP collector on loopback: what the receivers see in
 * `traceparent`, and the spans the collector gets. Runs on both engines (scripts/test-postgres.ts).
 */
let otlp: OtlpReceiver;
let rx: Receiver;
let s: TestServer;
const plans = new Map<string, (attempt: number) => Response>();
const attempts = new Map<string, number>();

/** A server configured as the standard variables say; batches go out every 10 ms. */
const traced = (env: Record<string, string>, config: Record<string, unknown> = {}) =>
  startTestServer({
    config: { retryDelayScale: 0.001, tracing: tracingFromEnv({ OTEL_BSP_SCHEDULE_DELAY: "10", ...env }), ...config },
  });

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  rx = await startReceiver((req) => {
    const path = new URL(req.url).pathname;
    const n = attempts.get(path) ?? 0;
    attempts.set(path, n + 1);
    return plans.get(path)?.(n) ?? new Response("ok");
  });
  s = await traced({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: "svcd-under-test", OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k%3D1" });
});
afterAll(async () => {
  await s.stop();
  rx.stop();
  otlp.stop();
});

const at = (path: string) => rx.received.filter((r) => new URL(r.url).pathname === path);

async function publish(server: TestServer, path: string, headers: Record<string, string> = {}, body = "payload") {
  const res = await server.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}

async function logsOf(server: TestServer, messageId: string, last: string) {
  return waitUntil(async () => {
    const body = (await (await server.api(`/v2/logs?messageId=${messageId}`)).json()) as { logs: Array<Record<string, any>> };
    return body.logs[0]?.state === last ? body.logs : undefined;
  }, { what: `${last} of ${messageId}` });
}

const spanOf = (id: string) => (sp: ReceivedSpan) => sp.spanId === id;
const PUBLISHER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PUBLISHER_SPAN = "00f067aa0ba902b7";

describe("tracing on", () => {
  test("a publish with a traceparent: every attempt's traceparent is svcd's span for it, under the publish, through retries", async () => {
    plans.set("/flaky", (n) => new Response("no", { status: n < 1 ? 500 : 200 }));
    const id = await publish(s, "/flaky", {
      traceparent: `00-${PUBLISHER_TRACE}-${PUBLISHER_SPAN}-01`,
      tracestate: "vendor=abc",
      // A traceparent the publisher forwards is replaced by svcd's.
      "Svc-Forward-Traceparent": `00-${"1".repeat(32)}-${"2".repeat(16)}-01`,
      "Svc-Label": "billing",
      "Svc-Retries": "2",
    });
    await waitUntil(() => at("/flaky").length >= 2, { what: "2 attempts" });
    const headers = at("/flaky").map((r) => traceparentParts(r.headers.get("traceparent")));
    expect(headers.map((h) => h.traceId)).toEqual([PUBLISHER_TRACE, PUBLISHER_TRACE]);
    expect(headers.map((h) => h.flags)).toEqual(["01", "01"]);
    expect(headers[0]!.spanId).not.toBe(headers[1]!.spanId);
    expect(at("/flaky").map((r) => r.headers.get("tracestate"))).toEqual(["vendor=abc", "vendor=abc"]);

    // The receiver's parent is svcd's attempt span, whose parent is the publish span, whose parent is the publisher's.
    const first = await otlp.span(spanOf(headers[0]!.spanId), "of the first attempt");
    const second = await otlp.span(spanOf(headers[1]!.spanId), "of the second attempt");
    const published = await otlp.span(spanOf(first.parentSpanId!), "of the publish");
    expect(second.parentSpanId).toBe(published.spanId);
    expect(published).toMatchObject({ traceId: PUBLISHER_TRACE, parentSpanId: PUBLISHER_SPAN, name: "publish" });
    expect(published.attributes).toMatchObject({
      "messaging.system": "svcd",
      "messaging.operation.type": "create",
      "messaging.message.id": id,
      "messaging.destination.name": `${rx.url}/flaky`,
      "svcd.labels": ["billing"],
    });
    expect(published.resource["service.name"]).toBe("svcd-under-test");
    expect(first.attributes).toMatchObject({
      "messaging.operation.type": "send",
      "messaging.message.id": id,
      "http.response.status_code": 500,
      "svcd.delivery.retried": 0,
      "svcd.delivery.outcome": "retry",
      "error.type": "500",
    });
    expect(first.status?.code).toBe(2);
    expect(second.attributes).toMatchObject({
      "http.response.status_code": 200,
      "svcd.delivery.retried": 1,
      "http.request.resend_count": 1,
      "svcd.delivery.outcome": "delivered",
    });
    expect(typeof second.attributes["svcd.delivery.waited_ms"]).toBe("number");
    expect(typeof second.attributes["svcd.delivery.lane_wait_ms"]).toBe("number");
    // The collector got the configured headers; the log says which trace the message is in.
    expect(otlp.requests.every((r) => r.path === "/v1/traces" && r.headers.get("x-api-key") === "k=1")).toBe(true);
    const logs = await logsOf(s, id, "DELIVERED");
    expect(new Set(logs.map((l) => l.traceId))).toEqual(new Set([PUBLISHER_TRACE]));
  });

  test("without one: a new trace, which the callback, the DLQ move and the failure callback continue", async () => {
    plans.set("/broken", () => new Response("down", { status: 500 }));
    const id = await publish(s, "/broken", {
      "Svc-Retries": "0",
      "Svc-Callback": `${rx.url}/cb`,
      "Svc-Failure-Callback": `${rx.url}/fcb`,
    });
    await waitUntil(() => at("/cb").length >= 1 && at("/fcb").length >= 1, { what: "both callbacks" });
    const attempt = traceparentParts(at("/broken")[0]!.headers.get("traceparent"));
    const attemptSpan = await otlp.span(spanOf(attempt.spanId), "of the attempt");
    const published = await otlp.span(spanOf(attemptSpan.parentSpanId!), "of the publish");
    expect(published.parentSpanId).toBeUndefined();
    expect(attemptSpan.attributes["svcd.delivery.outcome"]).toBe("failed");

    const deadLetter = await otlp.span((sp) => sp.name === "dead-letter" && sp.attributes["messaging.message.id"] === id, "of the DLQ move");
    expect(deadLetter.parentSpanId).toBe(attempt.spanId);
    const dlq = (await (await s.api(`/v2/dlq?messageId=${id}`)).json()) as { messages: Array<{ dlqId: string }> };
    expect(deadLetter.attributes["svcd.dlq.id"]).toBe(dlq.messages[0]!.dlqId);

    for (const [path, name] of [["/cb", "callback"], ["/fcb", "failure callback"]] as const) {
      const delivery = traceparentParts(at(path)[0]!.headers.get("traceparent"));
      expect(delivery.traceId).toBe(attempt.traceId);
      const callbackAttempt = await otlp.span(spanOf(delivery.spanId), `of the ${name}'s attempt`);
      const made = await otlp.span(spanOf(callbackAttempt.parentSpanId!), `that made the ${name}`);
      expect(made).toMatchObject({ name, parentSpanId: attempt.spanId });
      expect(callbackAttempt.name).toBe(`deliver ${name}`);
    }
  });

  test("redacted fields never reach a span", async () => {
    const secretHeader = "Bearer very-secret-header-value";
    const secretBody = "very-secret-body-value";
    const id = await publish(s, "/redacted", {
      "Svc-Forward-Authorization": secretHeader,
      "Svc-Redact-Fields": "body, header[Authorization]",
      "Svc-Callback": `${rx.url}/redacted-cb`,
    }, secretBody);
    await logsOf(s, id, "DELIVERED");
    await waitUntil(() => at("/redacted-cb").length >= 1, { what: "the callback" });
    const cb = traceparentParts(at("/redacted-cb")[0]!.headers.get("traceparent"));
    await otlp.span(spanOf(cb.spanId), "of the callback's attempt");
    // The delivery carried them; no span did.
    expect(at("/redacted")[0]!.headers.get("authorization")).toBe(secretHeader);
    const exported = otlp.bodies.join("\n");
    expect(exported).toContain(id);
    expect(exported).not.toContain("very-secret");
  });

  test("a collector that is down or never answers costs nothing: publishes and deliveries go on", async () => {
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const deadUrl = `http://127.0.0.1:${gone.port}`;
    gone.stop(true);
    const silent = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    for (const endpoint of [deadUrl, `http://127.0.0.1:${silent.port}`]) {
      const server = await traced({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_MAX_QUEUE_SIZE: "4" });
      try {
        const path = `/dead-${endpoint.split(":").pop()}`;
        const ids = await Promise.all(Array.from({ length: 20 }, () => publish(server, path, { "Svc-Callback": `${rx.url}${path}-cb` })));
        for (const id of ids) await logsOf(server, id, "DELIVERED");
        await waitUntil(() => at(`${path}-cb`).length >= 20, { what: "20 callbacks" });
        expect(at(path).every((r) => traceparentParts(r.headers.get("traceparent")).flags === "01")).toBe(true);
      } finally {
        await server.stop();
      }
    }
    silent.stop(true);
  });
});

describe("sampling and off", () => {
  test("an unsampled trace is passed on unsampled and makes no span", async () => {
    const server = await traced({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER: "always_off" });
    try {
      const id = await publish(server, "/unsampled");
      await logsOf(server, id, "DELIVERED");
      const parts = traceparentParts(at("/unsampled")[0]!.headers.get("traceparent"));
      expect(parts.flags).toBe("00");
      // The span of the same message on the sampled server arrives; none of this one ever does.
      const control = await publish(s, "/unsampled-control");
      await otlp.span((sp) => sp.attributes["messaging.message.id"] === control && sp.name === "deliver", "of the control");
      expect(otlp.spans.filter((sp) => sp.traceId === parts.traceId)).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  test("off: no traceparent of svcd's, a forwarded one passes as is, no trace id in the log", async () => {
    const server = await startTestServer();
    try {
      const forwarded = `00-${"3".repeat(32)}-${"4".repeat(16)}-01`;
      const id = await publish(server, "/off", { "Svc-Forward-Traceparent": forwarded, traceparent: `00-${PUBLISHER_TRACE}-${PUBLISHER_SPAN}-01` });
      const logs = await logsOf(server, id, "DELIVERED");
      expect(at("/off")[0]!.headers.get("traceparent")).toBe(forwarded);
      expect(logs.some((l) => "traceId" in l)).toBe(false);
    } finally {
      await server.stop();
    }
  });
});
