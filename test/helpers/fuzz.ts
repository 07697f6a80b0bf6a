/**
 * A seeded generator of random API requests, valid and invalid mixed, for every route family:
 * publish, enqueue, batch, messages, logs, DLQ, URL Groups, schedules, queues, flow control,
 * signing keys and the management API. Same seed, same requests.
 */

/** mulberry32: small, fast, good enough for test data. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Rng = ReturnType<typeof prng>;

export interface FuzzRequest {
  method: string;
  /** Path and query, relative to the server. */
  path: string;
  api: "messaging" | "management";
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** What it was meant to exercise, for failure reports. */
  kind: string;
}

/** What the generator knows of the server's state, learned from earlier answers. */
export interface FuzzState {
  receiverUrl: string;
  userId: string;
  messageIds: string[];
  dlqIds: string[];
  scheduleIds: string[];
  indexIds: string[];
}

const GROUPS = ["g1", "g2", "orders", "x.y-z_1"];
const QUEUES = ["q1", "q2", "jobs"];
const KEYS = ["k1", "k2", "tenant:7"];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/** Text that is often wrong: empty, huge, unicode, path tricks, numbers at the edges, JSON-ish. */
function junk(r: Rng): string {
  return r.pick([
    "",
    " ",
    "0",
    "-1",
    "1e309",
    "9".repeat(40),
    "NaN",
    "null",
    "true",
    "..",
    "../../etc/passwd",
    "a/b",
    "%2F",
    "%",
    "%00",
    "ü",
    "名前",
    "😀",
    "x".repeat(300),
    "{",
    "[]",
    "'; DROP TABLE messages; --",
    "<script>",
    "http://",
    "ftp://h/x",
    "javascript:alert(1)",
    `${r.int(1e6)}`,
  ]);
}

/** A value safe to put in a fetch header (printable Latin-1 only: fetch refuses the rest). */
const headerSafe = (text: string) => text.replace(/[^\x20-\x7e]/g, "?");

function pickOr<T>(r: Rng, valid: readonly T[], invalidChance = 0.3): T | string {
  return r.chance(invalidChance) ? junk(r) : r.pick(valid);
}

function publishHeaders(r: Rng, s: FuzzState): Record<string, string> {
  const h: Record<string, string> = {};
  const maybe = (name: string, value: () => string, p = 0.25) => {
    if (r.chance(p)) h[name] = headerSafe(value());
  };
  maybe("Svc-Retries", () => String(pickOr(r, ["0", "1", "2", "3"])));
  maybe("Svc-Delay", () => String(pickOr(r, ["0s", "1s", "2s", "1h", "1d", "1h30m"])), 0.35);
  maybe("Svc-Not-Before", () => String(pickOr(r, [String(Math.floor(Date.now() / 1000) + 3600), "0", "1"])), 0.05);
  maybe("Svc-Retry-Delay", () => String(pickOr(r, ["10", "pow(2, retried) * 5", "min(50, 10 * retried)", "1/0", "max(1,2)"])));
  maybe("Svc-Method", () => String(pickOr(r, METHODS)), 0.1);
  maybe("Svc-Timeout", () => String(pickOr(r, ["1s", "5s", "1m"])), 0.1);
  maybe("Svc-Callback", () => String(pickOr(r, [`${s.receiverUrl}/cb`])), 0.1);
  maybe("Svc-Failure-Callback", () => String(pickOr(r, [`${s.receiverUrl}/fcb`])), 0.1);
  maybe("Svc-Callback-Retries", () => String(pickOr(r, ["0", "1"])), 0.05);
  maybe("Svc-Forward-X-Fuzz", () => (r.chance(0.8) ? `v${r.int(100)}` : junk(r)), 0.2);
  maybe("Svc-Header-Forward", () => String(pickOr(r, ["true", "false"])), 0.05);
  maybe("Svc-Label", () => String(pickOr(r, ["a", "b,c", "fuzz"])), 0.1);
  maybe("Svc-Deduplication-Id", () => String(pickOr(r, ["d1", "d2", `d${r.int(20)}`, "a:b"])), 0.1);
  maybe("Svc-Content-Based-Deduplication", () => String(pickOr(r, ["true", "false"])), 0.05);
  maybe("Svc-Queue-Name", () => String(pickOr(r, QUEUES)), 0.05);
  if (r.chance(0.1)) {
    h["Svc-Flow-Control-Key"] = headerSafe(String(pickOr(r, KEYS)));
    if (r.chance(0.9))
      h["Svc-Flow-Control-Value"] = headerSafe(String(pickOr(r, ["rate=100", "parallelism=5", "rate=50, period=1s, parallelism=3", "rate=0", "period=9d"])));
  }
  if (r.chance(0.3)) h["Content-Type"] = r.pick(["text/plain", "application/json", "application/octet-stream"]);
  return h;
}

function destination(r: Rng, s: FuzzState): string {
  const roll = r.next();
  if (roll < 0.55) return `${s.receiverUrl}/${r.pick(["ok", "ok", "ok", "fail", "flaky"])}/${r.int(1000)}`;
  if (roll < 0.7) return r.pick(GROUPS);
  if (roll < 0.8) return r.pick(["http://127.0.0.1:9/refused", "https://127.0.0.1:9/x?a=1&b=2"]);
  return encodeURIComponent(junk(r)) || "%20";
}

function body(r: Rng): string | Uint8Array | undefined {
  const roll = r.next();
  if (roll < 0.3) return undefined;
  if (roll < 0.7) return `fuzz ${r.int(1e9)}`;
  if (roll < 0.85) return JSON.stringify({ n: r.int(100), s: junk(r) });
  const bytes = new Uint8Array(r.int(2048));
  for (let i = 0; i < bytes.length; i++) bytes[i] = r.int(256);
  return bytes;
}

/** A JSON body that is usually the right shape, sometimes wrong types, sometimes not JSON at all. */
function jsonish(r: Rng, valid: () => unknown): string {
  const roll = r.next();
  if (roll < 0.6) return JSON.stringify(valid());
  if (roll < 0.7) return "{";
  if (roll < 0.8) return JSON.stringify(r.pick([null, 5, "text", [], [1, 2], { unexpected: true }]));
  const v = valid() as Record<string, unknown>;
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const keys = Object.keys(v);
    if (keys.length) v[r.pick(keys)] = r.pick([null, -1, 1e308, "", junk(r), [], {}, true]);
  }
  return JSON.stringify(v);
}

const known = (r: Rng, ids: string[], fallback: () => string) => (ids.length && r.chance(0.7) ? r.pick(ids) : fallback());

export function generateRequest(r: Rng, s: FuzzState): FuzzRequest {
  const json = { "content-type": "application/json" };
  const query = () => {
    const parts: string[] = [];
    for (const key of ["count", "cursor", "state", "messageId", "label", "url", "fromDate", "toDate", "topicName", "responseStatus"])
      if (r.chance(0.1)) parts.push(`${key}=${encodeURIComponent(r.chance(0.5) ? junk(r) : String(r.int(200)))}`);
    return parts.length ? `?${parts.join("&")}` : "";
  };
  const roll = r.int(100);
  const M = (kind: string, method: string, path: string, extra: Partial<FuzzRequest> = {}): FuzzRequest => ({
    kind,
    method,
    path,
    api: "messaging",
    headers: {},
    ...extra,
  });
  const G = (kind: string, method: string, path: string, extra: Partial<FuzzRequest> = {}): FuzzRequest => ({
    ...M(kind, method, path, extra),
    api: "management",
  });
  if (roll < 40) {
    const params = r.chance(0.1) ? `?svc-retries=${encodeURIComponent(junk(r))}&svc-delay=1h&keep=1` : "";
    return M("publish", "POST", `/v2/publish/${destination(r, s)}${params}`, { headers: publishHeaders(r, s), body: body(r) });
  }
  if (roll < 44) return M("enqueue", "POST", `/v2/enqueue/${String(pickOr(r, QUEUES))}/${destination(r, s)}`, { headers: publishHeaders(r, s), body: body(r) });
  if (roll < 48)
    return M("batch", "POST", "/v2/batch", {
      headers: json,
      body: jsonish(r, () =>
        Array.from({ length: 1 + r.int(4) }, () => ({
          destination: destination(r, s).replace(/%[0-9A-F]{2}/g, ""),
          headers: r.chance(0.5) ? publishHeaders(r, s) : undefined,
          body: r.chance(0.5) ? "b" : undefined,
          queue: r.chance(0.1) ? r.pick(QUEUES) : undefined,
        })),
      ),
    });
  if (roll < 52) return M("get message", "GET", `/v2/messages/${known(r, s.messageIds, () => encodeURIComponent(junk(r)) || "x")}`);
  if (roll < 55) return M("cancel message", "DELETE", `/v2/messages/${known(r, s.messageIds, () => encodeURIComponent(junk(r)) || "x")}`);
  if (roll < 57)
    return M("bulk cancel", "DELETE", `/v2/messages${query()}`, {
      headers: json,
      body: jsonish(r, () => (r.chance(0.5) ? { messageIds: s.messageIds.slice(-3) } : { label: "fuzz", count: r.int(5) })),
    });
  if (roll < 62) return M("logs", "GET", `/v2/${r.pick(["logs", "events"])}${query()}`);
  if (roll < 65) return M("dlq list", "GET", `/v2/dlq${query()}`);
  if (roll < 67) return M("dlq get", "GET", `/v2/dlq/${known(r, s.dlqIds, () => `${r.int(1e13)}-${r.int(3)}`)}`);
  if (roll < 68) return M("dlq delete", "DELETE", `/v2/dlq/${known(r, s.dlqIds, () => encodeURIComponent(junk(r)) || "x")}`);
  if (roll < 69)
    return M("dlq retry", "POST", `/v2/dlq/retry/${known(r, s.dlqIds, () => "1-0")}`, { headers: r.chance(0.3) ? publishHeaders(r, s) : {} });
  if (roll < 70)
    return M("dlq bulk", r.pick(["POST", "DELETE"]), r.chance(0.5) ? "/v2/dlq/retry" : "/v2/dlq", {
      headers: json,
      body: jsonish(r, () => ({ dlqIds: s.dlqIds.slice(-2) })),
    });
  if (roll < 74) {
    const name = String(pickOr(r, GROUPS, 0.2));
    const endpoints = () => ({
      endpoints: Array.from({ length: 1 + r.int(3) }, () => ({
        url: r.chance(0.85) ? `${s.receiverUrl}/group/${r.int(5)}` : junk(r),
        name: r.chance(0.5) ? String(pickOr(r, ["e1", "e2", "e3"], 0.1)) : undefined,
      })),
    });
    const op = r.int(6);
    const path = `/v2/topics/${encodeURIComponent(name) || "x"}`;
    if (op === 0) return M("group add", "POST", `${path}/endpoints`, { headers: json, body: jsonish(r, endpoints) });
    if (op === 1) return M("group remove", "DELETE", `${path}/endpoints`, { headers: json, body: jsonish(r, endpoints) });
    if (op === 2) return M("group get", "GET", r.chance(0.5) ? path : "/v2/topics");
    if (op === 3) return M("group delete", "DELETE", path);
    if (op === 4)
      return M("group headers", "PATCH", path, {
        headers: json,
        body: jsonish(r, () => ({ headers: { "Svc-Retries": r.pick(["1", "x"]), "X-Default": r.pick(["a", ["b", "c"]]) } })),
      });
    return M("group publish", "POST", `/v2/publish/${encodeURIComponent(name) || "x"}`, { headers: publishHeaders(r, s), body: body(r) });
  }
  if (roll < 79) {
    const op = r.int(5);
    const id = known(r, s.scheduleIds, () => encodeURIComponent(junk(r)) || "x");
    if (op === 0) {
      const headers = publishHeaders(r, s);
      headers["Svc-Cron"] = headerSafe(String(pickOr(r, ["* * * * *", "*/5 * * * *", "0 0 1 1 *", "CRON_TZ=Europe/Paris 0 9 * * 1-5", "61 * * * *", "* * *", "@hourly", "0 0 31 2 *"])));
      if (r.chance(0.2)) headers["Svc-Schedule-Id"] = headerSafe(String(pickOr(r, ["s1", "s2", "nightly"])));
      return M("schedule create", "POST", `/v2/schedules/${destination(r, s)}`, { headers, body: body(r) });
    }
    if (op === 1) return M("schedule get", "GET", r.chance(0.5) ? `/v2/schedules/${id}` : "/v2/schedules");
    if (op === 2) return M("schedule delete", "DELETE", `/v2/schedules/${id}`);
    return M("schedule pause", r.pick(["POST", "PATCH"]), `/v2/schedules/${id}/${r.pick(["pause", "resume"])}`);
  }
  if (roll < 83) {
    const op = r.int(4);
    const name = String(pickOr(r, QUEUES, 0.2));
    if (op === 0)
      return M("queue upsert", "POST", "/v2/queues", {
        headers: json,
        body: jsonish(r, () => ({ queueName: name, parallelism: r.pick([1, 2, 5, 0, -1, 1000]), paused: r.chance(0.2) })),
      });
    if (op === 1) return M("queue get", "GET", r.chance(0.5) ? `/v2/queues/${encodeURIComponent(name) || "x"}` : "/v2/queues");
    if (op === 2) return M("queue pause", "POST", `/v2/queues/${encodeURIComponent(name) || "x"}/${r.pick(["pause", "resume"])}`);
    return M("queue delete", "DELETE", `/v2/queues/${encodeURIComponent(name) || "x"}`);
  }
  if (roll < 85) return M("flow control", "GET", r.chance(0.5) ? "/v2/flowControl" : `/v2/flowControl/${encodeURIComponent(String(pickOr(r, KEYS)))}`);
  if (roll < 86) return M("keys", r.chance(0.9) ? "GET" : "POST", r.chance(0.9) ? "/v2/keys" : "/v2/keys/rotate");
  // Management API.
  const family = r.pick(["/v2/search", "/v2/vector/index"]);
  const id = known(r, s.indexIds, () => encodeURIComponent(junk(r)) || "x");
  const op = r.int(8);
  if (op === 0)
    return G("index create", "POST", family, {
      headers: json,
      body: jsonish(r, () => ({
        name: String(pickOr(r, ["idx", `idx-${r.int(50)}`], 0.2)),
        region: r.pick(["eu-west-1", "us-central1"]),
        ...(family === "/v2/search" ? { type: r.pick(["free", "payg", "fixed"]) } : { similarity_function: r.pick(["COSINE", "DOT_PRODUCT"]), dimension_count: r.pick([8, 1536]) }),
      })),
    });
  if (op === 1) return G("index list", "GET", family);
  if (op === 2) return G("index get", "GET", `${family}/${id}`);
  if (op === 3) return G("index rename", "POST", `${family}/${id}/rename`, { headers: json, body: jsonish(r, () => ({ name: `renamed-${r.int(50)}` })) });
  if (op === 4) return G("index delete", "DELETE", `${family}/${id}`);
  if (op === 5) return G("vector stats", "GET", `/v2/vector/index/${id}/stats?period=${String(pickOr(r, ["1h", "3h", "12h", "1d", "3d", "7d", "30d"]))}`);
  if (op === 6) return G("messaging stats", "GET", `/v2/svc/stats/${r.chance(0.8) ? s.userId : "someone-else"}?period=${String(pickOr(r, ["1h", "1d", "30d"]))}`);
  return G("wrong method", r.pick(METHODS), r.pick([family, `${family}/${id}`, `/v2/svc/stats/${s.userId}`]));
}

/** Learns ids from an answer, so later requests hit existing objects. */
export function learn(s: FuzzState, req: FuzzRequest, status: number, body: unknown): void {
  if (status >= 300 || body === null || typeof body !== "object") return;
  const remember = (list: string[], id: unknown) => {
    if (typeof id !== "string") return;
    list.push(id);
    if (list.length > 200) list.shift();
  };
  const items = Array.isArray(body) ? body.flat() : [body];
  for (const item of items as Array<Record<string, unknown>>) {
    if (!item || typeof item !== "object") continue;
    remember(s.messageIds, item.messageId);
    remember(s.scheduleIds, item.scheduleId);
    if (req.api === "management" && req.method === "POST" && !req.path.includes("/rename")) remember(s.indexIds, item.id);
    for (const m of (item.messages as Array<Record<string, unknown>> | undefined) ?? []) remember(s.dlqIds, m.dlqId);
  }
}
