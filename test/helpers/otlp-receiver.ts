import { waitUntil } from "./wait.ts";

/** One span as an OTLP/HTTP JSON export carries it, with its attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
  /** The exporting service's resource attributes. */
  resource: Record<string, unknown>;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
};
type OtlpAttribute = { key: string; value: OtlpValue };

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: OtlpAttribute[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/**
 * A real OTLP/HTTP collector on a free loopback port: it accepts `POST /v1/traces` in JSON (what
 * svcd's exporter sends), keeps every span and the raw bodies, and answers as a collector does.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const requests: Array<{ path: string; headers: Headers }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const text = await request.text();
      requests.push({ path: new URL(request.url).pathname, headers: request.headers });
      if (request.method !== "POST" || !request.headers.get("content-type")?.includes("json"))
        return new Response("only OTLP JSON here", { status: 415 });
      bodies.push(text);
      const payload = JSON.parse(text) as {
        resourceSpans?: Array<{
          resource?: { attributes?: OtlpAttribute[] };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const rs of payload.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId as string,
              spanId: s.spanId as string,
              parentSpanId: (s.parentSpanId as string) || undefined,
              name: s.name as string,
              kind: s.kind as number,
              startMs: Number(BigInt(s.startTimeUnixNano as string) / 1_000_000n),
              endMs: Number(BigInt(s.endTimeUnixNano as string) / 1_000_000n),
              attributes: attributesOf(s.attributes as OtlpAttribute[]),
              status: s.status as ReceivedSpan["status"],
              resource,
            });
      }
      return Response.json({});
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    spans,
    bodies,
    requests,
    /** Waits for a span that `match` accepts, and returns it. */
    span(match: (s: ReceivedSpan) => boolean, what: string): Promise<ReceivedSpan> {
      return waitUntil(() => spans.find(match), { what: `span ${what}` });
    },
    stop: () => server.stop(true),
  };
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;

/** The fields of a `traceparent` header. */
export function traceparentParts(value: string | null): { traceId: string; spanId: string; flags: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value ?? "");
  if (!m) throw new Error(`not a traceparent: ${value}`);
  return { traceId: m[1]!, spanId: m[2]!, flags: m[3]! };
}
