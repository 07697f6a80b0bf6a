import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import * as crypto from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfigFile } from "../../src/config/config-file.ts";
import { createLogger } from "../../src/core/log.ts";
import { recordEvents } from "../helpers/events.ts";
import { dlqEntryOf, waitForState } from "../helpers/inspect.ts";
import { waitUntil } from "../helpers/wait.ts";
import { basicAuth, startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Two accounts from a config file. Account B, with its own valid credentials, tries every route
 * on what account A owns: always 404 (or 401 with A's credentials mixed in), never A's data, and
 * A's objects are unchanged afterwards. Secrets never appear in the server's log lines.
 */

const A = { email: "alice@a.io", apiKey: "alice-api-key-7f3a", userId: "alice", token: "alice-token-1c9e", plan: "payg" as const, currentSigningKey: "sig_aliceCurrentKey000000000000000", nextSigningKey: "sig_aliceNextKey000000000000000000" };
const B = { email: "bob@b.io", apiKey: "bob-api-key-55d0", userId: "bob", token: "bob-token-8b21", plan: "payg" as const };
const SECRETS = [A.token, B.token, A.apiKey, B.apiKey, A.currentSigningKey, A.nextSigningKey, basicAuth(A.email, A.apiKey).slice(6), basicAuth(B.email, B.apiKey).slice(6)];

const lines: string[] = [];
let s: TestServer;
let configDir: string;
const a = { messages: [] as string[], dlqIds: [] as string[], dlqMessageIds: [] as string[], searchId: "", vectorId: "" };

const asA = (path: string, init: RequestInit = {}) => s.api(path, { ...init, token: A.token });
const asB = (path: string, init: RequestInit = {}) => s.api(path, { ...init, token: B.token });
const mgmtA = (path: string, init: RequestInit = {}) => s.mgmt(path, { ...init, email: A.email, apiKey: A.apiKey });
const mgmtB = (path: string, init: RequestInit = {}) => s.mgmt(path, { ...init, email: B.email, apiKey: B.apiKey });
const json = (method: string, body: unknown): RequestInit => ({ method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

beforeAll(async () => {
  // Accounts come from a config file on disk, as in production.
  configDir = mkdtempSync(join(tmpdir(), "svcd-isolation-"));
  const configPath = join(configDir, "accounts.json");
  writeFileSync(configPath, JSON.stringify({ accounts: [A, B] }));
  s = await startTestServer({
    configFile: loadConfigFile(configPath),
    config: { retryDelayScale: 0.001 },
    logger: createLogger({ level: "debug", format: "json", write: (line) => lines.push(line) }),
  });

  // A's pending messages (delayed), one published with the token as a query parameter.
  for (let i = 0; i < 3; i++) {
    const res = await asA(`/v2/publish/http://127.0.0.1:9/a/${i}`, { method: "POST", body: `a${i}`, headers: { "Svc-Delay": "1h", "Svc-Label": "alice-label" } });
    expect(res.status).toBe(200);
    a.messages.push(((await res.json()) as { messageId: string }).messageId);
  }
  const viaQuery = await fetch(`${s.url}/v2/publish/http://127.0.0.1:9/a/q?svc_token=${A.token}&svc-delay=1h`, { method: "POST", body: "q" });
  expect(viaQuery.status).toBe(200);
  a.messages.push(((await viaQuery.json()) as { messageId: string }).messageId);
  // A's DLQ entries: a port nobody listens on, no retries.
  for (let i = 0; i < 2; i++) {
    const res = await asA(`/v2/publish/http://127.0.0.1:9/dead/${i}`, { method: "POST", body: "d", headers: { "Svc-Retries": "0" } });
    const { messageId } = (await res.json()) as { messageId: string };
    await waitForState(s, messageId, ["FAILED"]).catch(async () => {
      throw new Error(`A's message did not fail: ${JSON.stringify(await (await asA(`/v2/logs?messageId=${messageId}`)).json())}`);
    });
    a.dlqMessageIds.push(messageId);
  }
  for (const id of a.dlqMessageIds) {
    const list = (await (await asA(`/v2/dlq?messageId=${id}`)).json()) as { messages: Array<{ dlqId: string }> };
    a.dlqIds.push(list.messages[0]!.dlqId);
  }
  // A's indexes and their usage.
  const search = await mgmtA("/v2/search", json("POST", { name: "alice-search", region: "eu-west-1", type: "payg" }));
  a.searchId = ((await search.json()) as { id: string }).id;
  const vector = await mgmtA("/v2/vector/index", json("POST", { name: "alice-vectors", region: "eu-west-1", similarity_function: "COSINE", dimension_count: 4 }));
  a.vectorId = ((await vector.json()) as { id: string }).id;
  expect((await asA(`/__svc/usage/vector/${a.vectorId}`, json("POST", { samples: [{ queries: 7, updates: 3 }] }))).status).toBe(200);
});
afterAll(async () => {
  await s.stop();
  rmSync(configDir, { recursive: true, force: true });
});

/** What account A sees of everything it owns; must be identical before and after B's attempts. */
async function snapshotOfA() {
  const messages = await Promise.all(a.messages.map(async (id) => (await asA(`/v2/messages/${id}`)).json()));
  const dlq = await Promise.all(a.dlqIds.map(async (id) => (await asA(`/v2/dlq/${id}`)).json()));
  const logs = ((await (await asA("/v2/logs?count=1000")).json()) as { logs: unknown[] }).logs;
  const strip = (x: Record<string, unknown>) => {
    const { throughput_vector: _, ...rest } = x;
    return rest;
  };
  const search = strip((await (await mgmtA(`/v2/search/${a.searchId}`)).json()) as Record<string, unknown>);
  const vector = strip((await (await mgmtA(`/v2/vector/index/${a.vectorId}`)).json()) as Record<string, unknown>);
  const vectorStats = (await (await mgmtA(`/v2/vector/index/${a.vectorId}/stats`)).json()) as Record<string, unknown>;
  const stats = (await (await mgmtA(`/v2/svc/stats/${A.userId}`)).json()) as Record<string, unknown>;
  const keys = await (await asA("/v2/keys")).json();
  return {
    messages,
    dlq,
    logs,
    search,
    vector,
    vectorCounts: [vectorStats.daily_query_count, vectorStats.daily_update_count],
    // The hour's requests as a total: the series' points are minutes, and their times move on
    // when the two snapshots fall in different minutes.
    stats: [stats.dlq_message_count, (stats.daily_used as Array<{ y: number }>).reduce((sum, p) => sum + p.y, 0)],
    keys,
  };
}

/** B's answer must be a 404 (or 401) {"error"} that names nothing of A's beyond what B sent. */
async function expectNothing(res: Response, allowed = [404]) {
  const text = await res.text();
  expect(allowed).toContain(res.status);
  expect(Object.keys(JSON.parse(text))).toEqual(["error"]);
  for (const secret of [A.email, "alice-search", "alice-vectors", "alice-label", "127.0.0.1:9/a"]) expect(text).not.toContain(secret);
}

/**
 * Deletes are idempotent: B deleting A's object answers 200 as for a missing
 * one, and A's object stays (the last test compares A's objects with their state before).
 */
async function expectIdempotentDelete(res: Response) {
  expect(res.status).toBe(200);
  expect(await res.text()).toBe("");
}

let before: Awaited<ReturnType<typeof snapshotOfA>>;

describe("account B, with its own valid credentials, cannot see or touch account A's objects", () => {
  beforeAll(async () => {
    before = await snapshotOfA();
    expect(before.messages.every((m) => (m as { messageId?: string }).messageId)).toBe(true);
    expect(before.dlq.every((d) => (d as { dlqId?: string }).dlqId)).toBe(true);
    expect(before.stats[1]).toBeGreaterThan(0);
  });

  test("messages: get and cancel one are 404; bulk cancel by ids and by filters cancels nothing", async () => {
    for (const id of a.messages) {
      await expectNothing(await asB(`/v2/messages/${id}`));
      await expectNothing(await asB(`/v2/messages/${id}`, { method: "DELETE" }));
      // The token as a query parameter is the same account.
      await expectNothing(await fetch(`${s.url}/v2/messages/${id}?svc_token=${B.token}`));
    }
    expect(await (await asB("/v2/messages", json("DELETE", { messageIds: a.messages }))).json()).toEqual({ cancelled: 0 });
    expect(await (await asB("/v2/messages?label=alice-label", { method: "DELETE" })).json()).toEqual({ cancelled: 0 });
    expect(await (await asB("/v2/messages", { method: "DELETE" })).json()).toEqual({ cancelled: 0 });
  });

  test("logs and events: nothing of A's, whatever the filter", async () => {
    for (const query of ["", `?messageId=${a.messages[0]}`, "?label=alice-label", "?url=http://127.0.0.1:9/a/0", "?state=FAILED", "?count=1000"]) {
      for (const path of ["/v2/logs", "/v2/events"]) {
        const body = (await (await asB(path + query)).json()) as { events: unknown[]; logs?: unknown[] };
        expect(body.events).toEqual([]);
        expect(body.logs ?? []).toEqual([]);
      }
    }
  });

  test("DLQ: get, delete and retry one are 404; list, bulk delete and bulk retry see nothing", async () => {
    for (const dlqId of a.dlqIds) {
      await expectNothing(await asB(`/v2/dlq/${dlqId}`));
      await expectNothing(await asB(`/v2/dlq/${dlqId}`, { method: "DELETE" }));
      await expectNothing(await asB(`/v2/dlq/retry/${dlqId}`, { method: "POST" }));
    }
    expect(((await (await asB("/v2/dlq")).json()) as { messages: unknown[] }).messages).toEqual([]);
    expect(((await (await asB(`/v2/dlq?messageId=${a.dlqMessageIds[0]}`)).json()) as { messages: unknown[] }).messages).toEqual([]);
    expect(await (await asB("/v2/dlq", json("DELETE", { dlqIds: a.dlqIds }))).json()).toEqual({ deleted: 0 });
    expect(await (await asB(`/v2/dlq?dlqIds=${a.dlqIds.join(",")}`, { method: "DELETE" })).json()).toEqual({ deleted: 0 });
    expect(await (await asB("/v2/dlq/retry", json("POST", { dlqIds: a.dlqIds }))).json()).toEqual({ cursor: "", responses: [] });
    // Without ids, bulk retry takes every entry of the caller: none for B.
    expect(await (await asB("/v2/dlq/retry", { method: "POST" })).json()).toEqual({ cursor: "", responses: [] });
  });

  test("signing keys: B gets its own, and rotating them leaves A's alone", async () => {
    const keys = (await (await asB("/v2/keys")).json()) as { current: string; next: string };
    expect(keys.current).not.toBe(A.currentSigningKey);
    expect(keys.next).not.toBe(A.nextSigningKey);
    expect((await asB("/v2/keys/rotate", { method: "POST" })).status).toBe(200);
  });

  test("search indexes: get, rename, reset password and delete are 404; the list has only B's", async () => {
    await expectNothing(await mgmtB(`/v2/search/${a.searchId}`));
    await expectNothing(await mgmtB(`/v2/search/${a.searchId}/rename`, json("POST", { name: "taken-over" })));
    await expectNothing(await mgmtB(`/v2/search/${a.searchId}/reset-password`, { method: "POST" }));
    await expectNothing(await mgmtB(`/v2/search/${a.searchId}`, { method: "DELETE" }));
    expect(await (await mgmtB("/v2/search")).json()).toEqual([]);
  });

  test("vector indexes: get, stats, rename, reset password, delete and usage reports are 404", async () => {
    await expectNothing(await mgmtB(`/v2/vector/index/${a.vectorId}`));
    await expectNothing(await mgmtB(`/v2/vector/index/${a.vectorId}/stats`));
    await expectNothing(await mgmtB(`/v2/vector/index/${a.vectorId}/stats?period=30d`));
    await expectNothing(await mgmtB(`/v2/vector/index/${a.vectorId}/rename`, json("POST", { name: "taken-over" })));
    await expectNothing(await mgmtB(`/v2/vector/index/${a.vectorId}/reset-password`, { method: "POST" }));
    await expectNothing(await mgmtB(`/v2/vector/index/${a.vectorId}`, { method: "DELETE" }));
    await expectNothing(await asB(`/__svc/usage/vector/${a.vectorId}`, json("POST", { samples: [{ queries: 1000 }] })));
    await expectNothing(await asB(`/__svc/usage/search/${a.searchId}`, json("POST", { samples: [{ queries: 1000 }] })));
    expect(await (await mgmtB("/v2/vector/index")).json()).toEqual([]);
  });

  test("messaging statistics of A's user id are 404 for B", async () => {
    for (const period of ["", "?period=1h", "?period=30d"]) await expectNothing(await mgmtB(`/v2/svc/stats/${A.userId}${period}`));
    const own = (await (await mgmtB(`/v2/svc/stats/${B.userId}`)).json()) as { dlq_message_count: number };
    expect(own.dlq_message_count).toBe(0);
  });

  test("reset wipes only the caller's account", async () => {
    expect((await asB("/__svc/reset", { method: "POST" })).status).toBe(200);
  });

  test("mixed credentials are 401: A's email with B's key, a token as Basic, a Basic pair as a token", async () => {
    await expectNothing(await s.mgmt("/v2/search", { headers: { authorization: basicAuth(A.email, B.apiKey) } }), [401]);
    await expectNothing(await s.mgmt("/v2/search", { headers: { authorization: basicAuth(B.email, A.apiKey) } }), [401]);
    await expectNothing(await s.mgmt("/v2/search", { headers: { authorization: `Bearer ${A.token}` } }), [401]);
    await expectNothing(await s.mgmt("/v2/search", { headers: { authorization: basicAuth(A.email, A.token) } }), [401]);
    await expectNothing(await s.api(`/v2/messages/${a.messages[0]}`, { token: A.apiKey }), [401]);
    await expectNothing(await s.api(`/v2/messages/${a.messages[0]}`, { token: A.token.slice(0, -1) }), [401]);
    await expectNothing(await fetch(`${s.url}/v2/messages/${a.messages[0]}?svc_token=${A.token}x`), [401]);
    await expectNothing(await s.api(`/v2/messages/${a.messages[0]}`, { token: null }), [401]);
  });

  test("afterwards everything A owns is exactly as it was", async () => {
    expect(await snapshotOfA()).toEqual(before);
    // The default token of the test server is the first account's: A still has its DLQ entries.
    for (const id of a.dlqMessageIds) expect(await dlqEntryOf(s, id)).toBeDefined();
  });
});

describe("URL Groups, schedules, queues, flow-control keys and deduplication ids are the account's own", () => {
  const held: Array<() => void> = [];
  let rx: ReturnType<typeof Bun.serve>;
  const arrivals: string[] = [];
  let scheduleIdOfA = "";
  const queueMessageOfA: string[] = [];
  let events: ReturnType<typeof recordEvents>;
  /**
   * Waits until B's message is recorded as delivered: a request reaches the receiver before its
   * outcome is recorded, and until then the message is in flight (a bulk cancel would match it).
   */
  const deliveredOfB = async (res: Response) => {
    const { messageId } = (await res.json()) as { messageId: string };
    await events.of("delivered", messageId);
  };

  /** What A sees of its groups, schedules, queues and flow-control key. */
  async function domainsOfA() {
    const strip = (list: Array<Record<string, unknown>>) => list.map(({ nextScheduleTime: _n, lag: _l, ...rest }) => rest);
    return {
      topics: await (await asA("/v2/topics")).json(),
      group: await (await asA("/v2/topics/alice-group")).json(),
      schedules: strip((await (await asA("/v2/schedules")).json()) as Array<Record<string, unknown>>),
      queues: strip((await (await asA("/v2/queues")).json()) as Array<Record<string, unknown>>),
      queue: await (await asA("/v2/queues/alice-queue")).json(),
      flow: (await asA("/v2/flowControl/alice-key")).status,
      queued: await Promise.all(queueMessageOfA.map(async (id) => (await asA(`/v2/messages/${id}`)).status)),
    };
  }
  let beforeDomains: Awaited<ReturnType<typeof domainsOfA>>;

  beforeAll(async () => {
    events = recordEvents(s);
    rx = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const path = new URL(req.url).pathname;
        arrivals.push(path);
        if (path.startsWith("/hold")) await new Promise<void>((resolve) => held.push(resolve));
        return new Response("ok");
      },
    });
    const rxUrl = `http://127.0.0.1:${rx.port}`;
    expect((await asA("/v2/topics/alice-group/endpoints", json("POST", { endpoints: [{ name: "e1", url: "http://127.0.0.1:9/alice-endpoint" }] }))).status).toBe(200);
    expect((await asA("/v2/topics/alice-group", json("PATCH", { headers: { "X-Alice": "alice-default" } }))).status).toBe(200);
    const custom = await asA("/v2/schedules/http://127.0.0.1:9/alice-schedule", { method: "POST", headers: { "Svc-Cron": "0 0 1 1 *", "Svc-Schedule-Id": "alice-nightly" } });
    expect(custom.status).toBe(200);
    const generated = await asA("/v2/schedules/alice-group", { method: "POST", headers: { "Svc-Cron": "0 12 * * *" } });
    scheduleIdOfA = ((await generated.json()) as { scheduleId: string }).scheduleId;
    expect((await asA("/v2/queues", json("POST", { queueName: "alice-queue", parallelism: 1, paused: true }))).status).toBe(200);
    const queued = await asA(`/v2/enqueue/alice-queue/${rxUrl}/alice-queued`, { method: "POST", body: "q" });
    queueMessageOfA.push(((await queued.json()) as { messageId: string }).messageId);
    // A's flow-control key: one delivery in flight (held by the receiver) with parallelism 1.
    const flowHeaders = { "Svc-Flow-Control-Key": "alice-key", "Svc-Flow-Control-Value": "parallelism=1" };
    expect((await asA(`/v2/publish/${rxUrl}/hold/alice`, { method: "POST", body: "f", headers: flowHeaders })).status).toBe(200);
    await waitUntil(() => arrivals.includes("/hold/alice"), { what: "A's flow-controlled delivery to be in flight" });
    beforeDomains = await domainsOfA();
    expect(beforeDomains.queue).toMatchObject({ name: "alice-queue", paused: true });
    expect(beforeDomains.flow).toBe(200);
  });
  afterAll(() => {
    events.stop();
    for (const release of held) release();
    rx.stop(true);
  });

  test("URL Groups: get, remove endpoints, set headers and publish to A's group are 404 for B; delete leaves it", async () => {
    await expectNothing(await asB("/v2/topics/alice-group"));
    await expectIdempotentDelete(await asB("/v2/topics/alice-group", { method: "DELETE" }));
    await expectNothing(await asB("/v2/topics/alice-group/endpoints", json("DELETE", { endpoints: [{ name: "e1" }] })));
    await expectNothing(await asB("/v2/topics/alice-group", json("PATCH", { headers: { "X-Bob": "1" } })));
    await expectNothing(await asB("/v2/publish/alice-group", { method: "POST", body: "b" }));
    await expectNothing(await asB("/v2/schedules/alice-group", { method: "POST", headers: { "Svc-Cron": "* * * * *" } }));
    expect(await (await asB("/v2/topics")).json()).toEqual([]);
    const batch = (await (await asB("/v2/batch", json("POST", [{ destination: "alice-group", body: "b" }]))).json()) as unknown[];
    expect(JSON.stringify(batch)).not.toContain("alice-endpoint");
    expect(JSON.stringify(batch)).toContain("error");
  });

  test("B's group of the same name is B's own: A's endpoints and default headers are untouched", async () => {
    expect((await asB("/v2/topics/alice-group/endpoints", json("POST", { endpoints: [{ url: "http://127.0.0.1:9/bob-endpoint" }] }))).status).toBe(200);
    const mine = (await (await asB("/v2/topics/alice-group")).json()) as { endpoints: Array<{ url: string }> };
    expect(mine.endpoints.map((e) => e.url)).toEqual(["http://127.0.0.1:9/bob-endpoint"]);
    const published = (await (await asB("/v2/publish/alice-group?svc-delay=1h", { method: "POST", body: "b" })).json()) as Array<{ url: string; messageId: string }>;
    expect(published.map((p) => p.url)).toEqual(["http://127.0.0.1:9/bob-endpoint"]);
    expect(await (await asB(`/v2/messages/${published[0]!.messageId}`, { method: "DELETE" })).json()).toEqual({ cancelled: 1 });
    expect((await asB("/v2/topics/alice-group", { method: "DELETE" })).status).toBe(200);
  });

  test("schedules: get, pause and resume A's are 404, delete leaves it; B's schedule with A's custom id is B's own", async () => {
    for (const id of ["alice-nightly", scheduleIdOfA]) {
      await expectNothing(await asB(`/v2/schedules/${id}`));
      await expectIdempotentDelete(await asB(`/v2/schedules/${id}`, { method: "DELETE" }));
      for (const action of ["pause", "resume"])
        for (const method of ["POST", "PATCH"]) await expectNothing(await asB(`/v2/schedules/${id}/${action}`, { method }));
    }
    expect(await (await asB("/v2/schedules")).json()).toEqual([]);
    const replaced = await asB("/v2/schedules/http://127.0.0.1:9/bob-schedule", {
      method: "POST",
      headers: { "Svc-Cron": "*/5 * * * *", "Svc-Schedule-Id": "alice-nightly" },
    });
    expect(replaced.status).toBe(200);
    const mine = (await (await asB("/v2/schedules/alice-nightly")).json()) as { destination: string };
    expect(mine.destination).toBe("http://127.0.0.1:9/bob-schedule");
    expect((await asB("/v2/schedules/alice-nightly", { method: "DELETE" })).status).toBe(200);
  });

  test("queues: get, pause and resume A's are 404, delete leaves it; B's queue of the same name does not unpause A's", async () => {
    await expectNothing(await asB("/v2/queues/alice-queue"));
    await expectIdempotentDelete(await asB("/v2/queues/alice-queue", { method: "DELETE" }));
    await expectNothing(await asB("/v2/queues/alice-queue/resume", { method: "POST" }));
    await expectNothing(await asB("/v2/queues/alice-queue/pause", { method: "POST" }));
    expect(await (await asB("/v2/queues")).json()).toEqual([]);
    expect((await asB("/v2/queues", json("POST", { queueName: "alice-queue", paused: false }))).status).toBe(200);
    const rxUrl = `http://127.0.0.1:${rx.port}`;
    const queued = await asB(`/v2/enqueue/alice-queue/${rxUrl}/bob-queued`, { method: "POST", body: "b" });
    expect(queued.status).toBe(200);
    await deliveredOfB(queued);
    expect(arrivals).toContain("/bob-queued");
    expect(arrivals).not.toContain("/alice-queued");
    expect((await asB("/v2/queues/alice-queue", { method: "DELETE" })).status).toBe(200);
  });

  test("flow control: A's key is 404 for B, and B's key of the same name is a separate lane", async () => {
    await expectNothing(await asB("/v2/flowControl/alice-key"));
    expect(JSON.stringify(await (await asB("/v2/flowControl")).json())).not.toContain("alice-key");
    // A's lane is full (parallelism 1, one delivery held): B's message with the same key still goes.
    const rxUrl = `http://127.0.0.1:${rx.port}`;
    const res = await asB(`/v2/publish/${rxUrl}/bob-flow`, {
      method: "POST",
      body: "b",
      headers: { "Svc-Flow-Control-Key": "alice-key", "Svc-Flow-Control-Value": "parallelism=1" },
    });
    expect(res.status).toBe(200);
    await deliveredOfB(res);
    expect(arrivals).toContain("/bob-flow");
  });

  test("bulk cancel by A's group, queue, key or schedule cancels nothing of A's", async () => {
    // B's own messages on a group, queue or key of those names were delivered before.
    for (const filter of ["topicName=alice-group", "queueName=alice-queue", "flowControlKey=alice-key", "scheduleId=alice-nightly"])
      expect(await (await asB(`/v2/messages?${filter}`, { method: "DELETE" })).json()).toEqual({ cancelled: 0 });
  });

  test("a deduplication id A used does not deduplicate (or reveal) B's message", async () => {
    const first = (await (await asA("/v2/publish/http://127.0.0.1:9/dedup?svc-delay=1h", { method: "POST", body: "a", headers: { "Svc-Deduplication-Id": "shared-id" } })).json()) as { messageId: string };
    const other = await asB("/v2/publish/http://127.0.0.1:9/dedup?svc-delay=1h", { method: "POST", body: "a", headers: { "Svc-Deduplication-Id": "shared-id" } });
    expect(other.status).toBe(200);
    const body = (await other.json()) as { messageId: string; deduplicated?: boolean };
    expect(body.deduplicated).toBeUndefined();
    expect(body.messageId).not.toBe(first.messageId);
    // Content-based deduplication is per account too.
    const a2 = await asA("/v2/publish/http://127.0.0.1:9/cbd?svc-delay=1h", { method: "POST", body: "same", headers: { "Svc-Content-Based-Deduplication": "true" } });
    const b2 = await asB("/v2/publish/http://127.0.0.1:9/cbd?svc-delay=1h", { method: "POST", body: "same", headers: { "Svc-Content-Based-Deduplication": "true" } });
    expect([a2.status, b2.status]).toEqual([200, 200]);
  });

  test("afterwards A's groups, schedules, queues and flow-control key are exactly as they were", async () => {
    expect(await domainsOfA()).toEqual(beforeDomains);
    expect(arrivals).not.toContain("/alice-queued");
  });
});

describe("secrets never reach the log", () => {
  test("tokens, API keys, Basic credentials and signing keys appear in no log line", async () => {
    // Requests that carry secrets in every place a client may put them, including failures.
    await fetch(`${s.url}/v2/publish/http://127.0.0.1:9/log?svc_token=${A.token}&svc-delay=1h`, { method: "POST", body: "x" });
    await fetch(`${s.url}/v2/publish/http://127.0.0.1:9/log?svc_token=${A.token}x`, { method: "POST", body: "x" });
    await fetch(`${s.url}/v2/publish/http://127.0.0.1:9/log?svc_token=${A.token}&svc-retries=bad`, { method: "POST", body: "x" });
    await fetch(`${s.url}/v2/nowhere?svc_token=${A.token}`);
    await fetch(`${s.url}/v2/logs?svc_token=${B.token}&count=abc`);
    await s.mgmt("/v2/search/nope", { email: A.email, apiKey: A.apiKey });
    await s.mgmt("/v2/search", { email: A.email, apiKey: `${A.apiKey}-wrong` });
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.some((l) => l.includes("/v2/publish/"))).toBe(true);
    for (const line of lines) for (const secret of SECRETS) expect(line).not.toContain(secret);
  });

  test("account lookups compare against every account in constant time, whichever matches", async () => {
    const compare = spyOn(crypto, "timingSafeEqual");
    try {
      const accounts = s.ctx.accounts.all().length;
      for (const [token, owner] of [[A.token, A.userId], [B.token, B.userId], [`${A.token}x`, undefined], ["", undefined]] as const) {
        compare.mockClear();
        expect(s.ctx.accounts.byToken(token)?.id).toBe(owner);
        // Two fixed-length hash comparisons per account (its token, its read-only token), never an
        // early exit on the first match.
        expect(compare.mock.calls.length).toBe(accounts * 2);
        for (const [x, y] of compare.mock.calls) expect([(x as Uint8Array).length, (y as Uint8Array).length]).toEqual([32, 32]);
      }
      compare.mockClear();
      expect(s.ctx.accounts.byBasic(B.email, B.apiKey)?.id).toBe(B.userId);
      expect(compare.mock.calls.length).toBe(accounts);
    } finally {
      compare.mockRestore();
    }
  });
});
