/**
 * Fidelity to today's hosted API, driven by the official TypeScript client
 * `@upstash/qstash` against svcd in the `upstash` dialect: what the client sends is exactly what it
 * sends to the hosted service, and what it reads back must be there.
 */
import { Client, QstashError, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver as TestReceiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let s: TestServer;
let rx: TestReceiver;
let client: Client;
/** Requests to /held/... wait until the test opens the gate; `close` makes new ones wait again. */
let gate = Promise.withResolvers<void>();
let running = 0;
let mostRunning = 0;

const only = (path: string) => rx.received.filter((r) => r.path === path);
const reset = async () => {
  expect((await s.api("/__svc/reset", { method: "POST" })).status).toBe(200);
  rx.received.length = 0;
};
/** The error the client throws for a refused request. */
const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e as QstashError);

beforeAll(async () => {
  s = await startTestServer({ config: { dialect: "upstash" } });
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/held")) {
      mostRunning = Math.max(mostRunning, ++running);
      await gate.promise;
      running--;
    }
    // /flaky/... fails the first time a path is asked, then succeeds (so a DLQ retry delivers it).
    const fails = req.path.startsWith("/fail") || (req.path.startsWith("/flaky") && only(req.path).length === 1);
    return new Response(fails ? "nope" : "ok", { status: fails ? 500 : 200 });
  });
  client = new Client({ baseUrl: s.url, token: s.token, retry: false });
});
afterAll(async () => {
  gate.resolve();
  rx.stop();
  await s.stop();
});
beforeEach(reset);

describe("URLs are kept exactly as given", () => {
  test("destination, callback and failure callback without a path read back and sign without a trailing slash", async () => {
    const bare = rx.url; // http://127.0.0.1:<port>, no path
    const withQuery = `${rx.url}?tenant=a`;
    const { messageId, url } = await client.publish({ url: withQuery, body: "x", delay: 3600, callback: bare, failureCallback: bare });
    expect(url).toBe(withQuery);
    const message = await client.messages.get(messageId);
    expect(message).toMatchObject({ url: withQuery, callback: bare, failureCallback: bare });
    const logs = await client.logs({ messageIds: [messageId] });
    expect(logs.logs.map((l) => l.url)).toEqual([withQuery]);

    // Delivered and signed for the URL as given: the Receiver checks `sub` against it byte for byte.
    const sent = await client.publish({ url: bare, body: "signed" });
    expect(sent.url).toBe(bare);
    await flush(s.api);
    const [delivery] = rx.received.filter((r) => r.headers.get("upstash-message-id") === sent.messageId);
    const keys = (await client.http.request({ method: "GET", path: ["v2", "keys"] })) as { current: string; next: string };
    const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    expect(await receiver.verify({ signature: delivery!.headers.get("upstash-signature")!, body: "signed", url: bare })).toBe(true);
    await expect(receiver.verify({ signature: delivery!.headers.get("upstash-signature")!, body: "signed", url: `${bare}/` })).rejects.toThrow();
  });

  test("URL Group endpoints and schedule destinations and callbacks read back exactly as given", async () => {
    await client.urlGroups.addEndpoints({ name: "exact", endpoints: [{ url: rx.url, name: "bare" }, { url: `${rx.url}?x=1` }] });
    const group = await client.urlGroups.get("exact");
    expect(group.endpoints.map((e) => e.url)).toEqual([rx.url, `${rx.url}?x=1`]);
    const published = (await client.publish({ urlGroup: "exact", body: "fan", delay: 3600 })) as unknown as Array<{ url: string }>;
    expect(published.map((p) => p.url)).toEqual([rx.url, `${rx.url}?x=1`]);
    // Removing by another spelling of the same URL still finds it.
    await client.urlGroups.removeEndpoints({ name: "exact", endpoints: [{ url: `${rx.url}/` }] });
    expect((await client.urlGroups.get("exact")).endpoints.map((e) => e.url)).toEqual([`${rx.url}?x=1`]);

    const { scheduleId } = await client.schedules.create({ destination: rx.url, cron: "0 0 * * *", callback: rx.url, failureCallback: `${rx.url}?f=1` });
    const schedule = await client.schedules.get(scheduleId);
    expect(schedule).toMatchObject({ destination: rx.url, callback: rx.url, failureCallback: `${rx.url}?f=1` });
  });
});

describe("several labels", () => {
  test("a label list reads back as label (the first) and labels (all, in order) on the message, its logs and its DLQ entry", async () => {
    const pending = await client.publish({ url: `${rx.url}/later`, body: "x", delay: 3600, label: ["billing", "eu"] });
    const message = await client.messages.get(pending.messageId);
    expect(message.label).toBe("billing");
    expect(message.labels).toEqual(["billing", "eu"]);
    const [created] = (await client.logs({ messageIds: [pending.messageId] })).logs;
    expect(created).toMatchObject({ state: "CREATED", label: "billing", labels: ["billing", "eu"] });

    const failed = await client.publish({ url: `${rx.url}/fail/labelled`, body: "x", retries: 0, label: ["billing", "us"] });
    await flush(s.api);
    const [entry] = (await client.dlq.listMessages({ filter: { label: "us" } })).messages;
    expect(entry).toMatchObject({ messageId: failed.messageId, label: "billing", labels: ["billing", "us"] });
    // The label filter matches any of a message's labels.
    const byLabel = await client.logs({ filter: { label: "eu", state: "CREATED" } });
    expect(byLabel.logs.map((l) => l.messageId)).toEqual([pending.messageId]);
    const schedule = await client.schedules.create({ destination: `${rx.url}/cron`, cron: "0 0 * * *", label: ["nightly", "reports"] });
    expect(await client.schedules.get(schedule.scheduleId)).toMatchObject({ label: "nightly", labels: ["nightly", "reports"] });
  });
});

describe("multi-valued filters, host and path", () => {
  /** Five pending messages: two to /p on host a, one to /q on host a, two on host b; various labels and keys. */
  async function fivePending() {
    const other = rx.url.replace("127.0.0.1", "localhost");
    const specs = [
      { url: `${rx.url}/p`, label: ["red"], flowControl: { key: "k1", parallelism: 1 } },
      { url: `${rx.url}/p?x=1`, label: ["green", "red"], flowControl: { key: "k2", parallelism: 1 } },
      { url: `${rx.url}/q`, label: ["blue"], flowControl: { key: "k1", parallelism: 1 } },
      { url: `${other}/p/deeper`, label: ["green"] },
      { url: `${other}/r`, label: ["yellow"] },
    ];
    const ids: string[] = [];
    for (const spec of specs) ids.push((await client.publish({ ...spec, body: "x", delay: 3600 })).messageId);
    return { ids, other };
  }
  const sorted = (list: string[]) => [...list].sort();
  const createdIn = async (filter: Record<string, unknown>) =>
    sorted((await client.logs({ filter: { ...filter, state: "CREATED" } as never })).logs.map((l) => l.messageId));

  test("logs: OR within a filter over labels, URLs, hosts, paths and flow-control keys; AND across them", async () => {
    const { ids, other } = await fivePending();
    expect(await createdIn({ label: ["red", "yellow"] })).toEqual(sorted([ids[0]!, ids[1]!, ids[4]!]));
    expect(await createdIn({ url: [`${rx.url}/q`, `${other}/r`] })).toEqual(sorted([ids[2]!, ids[4]!]));
    expect(await createdIn({ host: new URL(other).hostname })).toEqual(sorted([ids[3]!, ids[4]!]));
    expect(await createdIn({ path: ["/p", "/r"] })).toEqual(sorted([ids[0]!, ids[1]!, ids[4]!]));
    expect(await createdIn({ flowControlKey: ["k1", "k2"] })).toEqual(sorted([ids[0]!, ids[1]!, ids[2]!]));
    expect(await createdIn({ label: "green", path: "/p" })).toEqual([ids[1]!]);
    expect(await createdIn({ host: "127.0.0.1", flowControlKey: "k1", label: ["blue", "red"] })).toEqual(sorted([ids[0]!, ids[2]!]));
    const publisher = ((await client.messages.get(ids[0]!)) as { callerIP?: string }).callerIP!;
    expect(await createdIn({ callerIp: [publisher, "10.9.9.9"] })).toEqual(sorted(ids));
    expect(await createdIn({ callerIp: "10.9.9.9" })).toEqual([]);
  });

  test("bulk cancel by path cancels exactly the matching messages; by several labels and hosts too", async () => {
    const { ids, other } = await fivePending();
    expect(await client.messages.cancel({ filter: { path: "/p" } })).toEqual({ cancelled: 2 });
    const alive = async () => sorted(await Promise.all(ids.map((id) => client.messages.get(id).then((m) => m.messageId, () => "")))).filter(Boolean);
    expect(await alive()).toEqual(sorted([ids[2]!, ids[3]!, ids[4]!]));
    expect(await client.messages.cancel({ filter: { label: ["blue", "yellow"], host: [new URL(other).host, "127.0.0.1"] } })).toEqual({ cancelled: 2 });
    expect(await alive()).toEqual([ids[3]!]);
    const more = await fivePending();
    expect(await client.messages.cancel({ filter: { url: [`${rx.url}/q`, `${more.other}/r`] } })).toEqual({ cancelled: 2 });
    expect(await client.messages.cancel({ filter: { flowControlKey: ["k1", "k2"] } })).toEqual({ cancelled: 2 });
    expect(await alive()).toEqual([ids[3]!]);
    expect((await client.messages.get(more.ids[3]!)).messageId).toBe(more.ids[3]!);
  });

  test("DLQ: list, retry and delete with OR filters; a typo in a bulk-delete filter is refused and deletes nothing", async () => {
    for (const [path, label, key] of [["/fail/a", "red", "ka"], ["/fail/b", "green", "kb"], ["/fail/c", "blue", "kc"]] as const)
      await client.publish({ url: `${rx.url}${path}`, body: "x", retries: 0, label, flowControl: { key, parallelism: 1 } });
    await flush(s.api);
    const listed = async (filter: Record<string, unknown>) => sorted((await client.dlq.listMessages({ filter: filter as never })).messages.map((m) => m.url));
    expect(await listed({ label: ["red", "blue"] })).toEqual([`${rx.url}/fail/a`, `${rx.url}/fail/c`]);
    expect(await listed({ url: [`${rx.url}/fail/b`, `${rx.url}/fail/c`], responseStatus: [500, 502] })).toEqual([`${rx.url}/fail/b`, `${rx.url}/fail/c`]);
    expect(await listed({ path: "/fail/b" })).toEqual([`${rx.url}/fail/b`]);
    expect(await listed({ flowControlKey: ["ka", "kb"], label: ["green", "blue"] })).toEqual([`${rx.url}/fail/b`]);

    const typo = await refusal(client.dlq.delete({ filter: { lable: "red" } as never }));
    expect(typo!.status).toBe(400);
    expect(JSON.parse(typo!.message).error).toContain('"lable"');
    expect((await client.dlq.listMessages()).messages).toHaveLength(3);

    const retried = await client.dlq.retry({ filter: { label: ["red", "green"] } });
    expect(retried.responses).toHaveLength(2);
    expect(retried.cursor).toBeUndefined();
    // host and path filter the DLQ too (the client's types leave them out for the DLQ).
    expect(await client.dlq.delete({ filter: { host: "127.0.0.1", path: ["/fail/c"] } as never })).toEqual({ deleted: 1 });
  });
});

describe("count bounds every bulk operation", () => {
  test("DLQ retry and delete with count 1 act on one entry, oldest first, and answer a cursor while more match", async () => {
    const deadLetters = async (prefix: string) => {
      for (const n of [1, 2, 3]) {
        await client.publish({ url: `${rx.url}/${prefix}/${n}`, body: String(n), retries: 0 });
        await flush(s.api); // one by one: their DLQ order is their publish order
      }
    };
    const urls = async () => (await client.dlq.listMessages()).messages.map((m) => m.url).sort();

    await deadLetters("flaky");
    const first = await client.dlq.retry({ all: true, count: 1 });
    expect(first.responses).toHaveLength(1);
    expect(first.cursor).toBeTruthy();
    expect(await urls()).toEqual([`${rx.url}/flaky/2`, `${rx.url}/flaky/3`]);
    const second = await client.dlq.retry({ all: true, count: 1, cursor: first.cursor });
    expect(second.responses).toHaveLength(1);
    expect(await urls()).toEqual([`${rx.url}/flaky/3`]);
    const last = await client.dlq.retry({ all: true, count: 1, cursor: second.cursor });
    expect(last.responses).toHaveLength(1);
    expect(last.cursor).toBeUndefined(); // svcd answered cursor "" (done): the client reads it as undefined
    await flush(s.api);
    expect(await urls()).toEqual([]);
    // Each dead letter was delivered again once. (Their arrival order is not the retry order:
    // three retried messages are delivered side by side.)
    expect(rx.received.filter((r) => r.path.startsWith("/flaky/")).map((r) => r.path).sort()).toEqual(
      ["/flaky/1", "/flaky/1", "/flaky/2", "/flaky/2", "/flaky/3", "/flaky/3"],
    );

    await deadLetters("fail");

    const deleted = await client.dlq.delete({ all: true, count: 1 });
    expect(deleted.deleted).toBe(1);
    expect(deleted.cursor).toBeTruthy();
    // The oldest went first.
    expect(await urls()).toEqual([`${rx.url}/fail/2`, `${rx.url}/fail/3`]);
    // The loop the client's documentation shows ends when no cursor comes back.
    let cursor: string | undefined = deleted.cursor;
    let calls = 0;
    do {
      ({ cursor } = await client.dlq.delete({ all: true, count: 1, cursor }));
      calls++;
    } while (cursor);
    expect(calls).toBe(2);
    expect(await urls()).toEqual([]);
  });

  test("bulk cancel acts on at most count messages, oldest first, with a cursor while more match", async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await client.publish({ url: `${rx.url}/later/${n}`, body: "x", delay: 3600, label: "batch" })).messageId);
    const first = (await s.api("/v2/messages?label=batch&count=2", { method: "DELETE" }).then((r) => r.json())) as { cancelled: number; cursor?: string };
    expect(first.cancelled).toBe(2);
    expect(first.cursor).toBeTruthy();
    expect((await client.messages.get(ids[2]!)).messageId).toBe(ids[2]!);
    const rest = (await s.api(`/v2/messages?label=batch&count=2&cursor=${first.cursor}`, { method: "DELETE" }).then((r) => r.json())) as { cancelled: number; cursor?: string };
    expect(rest).toEqual({ cancelled: 1 });
  });
});

describe("flow-control keys steered through the client", () => {
  const flowControl = { key: "partner", parallelism: 4 };

  test("pause: the key's messages are not delivered while paused, and are after resume", async () => {
    await client.flowControl.pause("partner");
    expect(await client.flowControl.get("partner")).toMatchObject({ flowControlKey: "partner", isPaused: true });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await client.publish({ url: `${rx.url}/paused`, body: String(i), flowControl })).messageId);
    // A message without the key goes through; the paused ones wait (flush does not wait for them).
    await client.publish({ url: `${rx.url}/free`, body: "x" });
    await flush(s.api);
    expect(only("/free")).toHaveLength(1);
    expect(only("/paused")).toHaveLength(0);
    expect(await client.flowControl.get("partner")).toMatchObject({ isPaused: true, waitListSize: 3, parallelismCount: 0 });
    for (const id of ids) expect((await client.messages.get(id)).messageId).toBe(id);

    await client.flowControl.resume("partner");
    await rx.waitFor(3, { match: (r) => r.path === "/paused" });
    expect((await client.flowControl.get("partner")).isPaused).toBe(false);
  });

  test("pin parallelism 1: never two in flight although the messages say 4; unpin gives the 4 back", async () => {
    gate = Promise.withResolvers<void>();
    mostRunning = 0;
    await client.flowControl.pin("partner", { parallelism: 1 });
    for (let i = 0; i < 3; i++) await client.publish({ url: `${rx.url}/held/pinned`, body: String(i), flowControl });
    await rx.waitFor(1, { match: (r) => r.path === "/held/pinned" });
    const info = await waitUntil(async () => {
      const v = await client.flowControl.get("partner");
      return v.waitListSize === 2 ? v : null;
    });
    expect(info).toMatchObject({ parallelismMax: 1, parallelismCount: 1, isPinnedParallelism: true, isPinnedRate: false });
    gate.resolve();
    await rx.waitFor(3, { match: (r) => r.path === "/held/pinned" });
    expect(mostRunning).toBe(1);

    await client.flowControl.unpin("partner", { parallelism: true });
    gate = Promise.withResolvers<void>();
    mostRunning = 0;
    for (let i = 0; i < 4; i++) await client.publish({ url: `${rx.url}/held/unpinned`, body: String(i), flowControl });
    await rx.waitFor(4, { match: (r) => r.path === "/held/unpinned" });
    expect(mostRunning).toBe(4);
    gate.resolve();
  });

  test("resetRate: a key at its rate starts a new period and the next message goes", async () => {
    const hourly = { key: "hourly", rate: 1, period: "1h" as const };
    for (let i = 0; i < 2; i++) await client.publish({ url: `${rx.url}/hourly`, body: String(i), flowControl: hourly });
    await rx.waitFor(1, { match: (r) => r.path === "/hourly" });
    const before = await waitUntil(async () => {
      const v = await client.flowControl.get("hourly");
      return v.waitListSize === 1 ? v : null;
    });
    expect(before).toMatchObject({ rateMax: 1, rateCount: 1, ratePeriod: 3600 });
    await client.flowControl.resetRate("hourly");
    await rx.waitFor(2, { match: (r) => r.path === "/hourly" });
    await client.flowControl.pin("hourly", { rate: 5, period: 60 });
    expect(await client.flowControl.get("hourly")).toMatchObject({ rateMax: 5, ratePeriod: 60, rateCount: 0, isPinnedRate: true });
  });

  test("global parallelism: the plan's limit and what runs now", async () => {
    expect(await client.flowControl.getGlobalParallelism()).toEqual({ parallelismMax: 100, parallelismCount: 0 });
  });
});

describe("plan limits are 412, malformed values 400", () => {
  test("retries, delay and timeout above the plan answer 412 naming the limit; nothing is stored", async () => {
    for (const [request, header] of [
      [{ retries: 21 }, "Upstash-Retries"],
      [{ delay: "400d" }, "Upstash-Delay"],
      [{ timeout: "3h" }, "Upstash-Timeout"],
    ] as const) {
      const error = await refusal(client.publish({ url: `${rx.url}/over`, body: "x", ...request }));
      expect(error).toBeInstanceOf(QstashError);
      expect(error!.status).toBe(412);
      expect(JSON.parse(error!.message).error).toContain(header);
    }
    const malformed = await refusal(client.publish({ url: `${rx.url}/over`, body: "x", delay: "soon" as never }));
    expect(malformed!.status).toBe(400);
    expect((await client.logs()).logs).toEqual([]);
  });
});

describe("lenient where clients are sloppy", () => {
  test("null in a batch element means not set (as the Python client sends it)", async () => {
    const res = await s.api("/v2/batch", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { destination: `${rx.url}/null-fields`, headers: null, body: null, queue: null },
        { destination: `${rx.url}/null-queue`, body: "b", queue: null },
      ]),
    });
    expect(res.status).toBe(200);
    const answers = (await res.json()) as Array<{ messageId?: string; error?: string }>;
    expect(answers.map((a) => a.error)).toEqual([undefined, undefined]);
    await flush(s.api);
    expect(only("/null-fields").map((r) => r.text)).toEqual([""]);
    expect(only("/null-queue").map((r) => r.text)).toEqual(["b"]);
  });

  test("deleting a URL Group, queue or schedule that does not exist succeeds (clients delete before they create)", async () => {
    await client.urlGroups.delete("never-created");
    await client.queue({ queueName: "never-created" }).delete();
    await client.schedules.delete("never-created");
    // Reads of what does not exist stay 404.
    expect((await refusal(client.urlGroups.get("never-created")))!.status).toBe(404);
    expect((await refusal(client.dlq.delete("1-0")))!.status).toBe(404);
  });
});

describe("fields clients require", () => {
  test("every log entry of a message with a retry delay expression carries it under both names", async () => {
    const { messageId } = await client.publish({ url: `${rx.url}/expr`, body: "x", retryDelay: "pow(2, retried) * 1000" });
    await flush(s.api);
    const { logs } = await client.logs({ messageIds: [messageId] });
    expect(logs.map((l) => l.state)).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
    for (const entry of logs as Array<Record<string, unknown>>) {
      expect(entry.retryDelayExpression).toBe("pow(2, retried) * 1000");
      expect(entry.retryDelayExpr).toBe("pow(2, retried) * 1000");
    }
  });

  test("a DLQ entry without an HTTP answer has responseStatus 0 and the error", async () => {
    const { messageId } = await client.publish({ url: "http://127.0.0.1:9/refused", body: "x", retries: 0 });
    await flush(s.api);
    const [entry] = (await client.dlq.listMessages()).messages as Array<Record<string, unknown>>;
    expect(entry).toMatchObject({ messageId, responseStatus: 0 });
    expect(typeof entry!.error).toBe("string");
  });
});

describe("the other dialect is never silently ignored", () => {
  test("Svc-* headers and svc_token sent to the upstash dialect answer 400 naming them and the flag", async () => {
    const res = await s.api(`/v2/publish/${rx.url}/svc`, { method: "POST", body: "x", headers: { "Svc-Retries": "1" } });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toContain("Svc-Retries");
    expect(error).toContain("--dialect svc");
    const byToken = await s.api(`/v2/dlq?svc_token=${s.token}`, { token: null });
    expect(byToken.status).toBe(400);
    expect(((await byToken.json()) as { error: string }).error).toContain("svc_token");
    expect((await client.logs()).logs).toEqual([]);
  });

  test("the official client against the svc dialect gets a 400 that names the header and --dialect upstash", async () => {
    const svc = await startTestServer();
    try {
      const wrong = new Client({ baseUrl: svc.url, token: svc.token, retry: false });
      const error = await refusal(wrong.publish({ url: `${rx.url}/wrong-dialect`, body: "x", retries: 1 }));
      expect(error!.status).toBe(400);
      const text = JSON.parse(error!.message).error as string;
      expect(text).toContain("Upstash-");
      expect(text).toContain("--dialect upstash");
      const byToken = await svc.api(`/v2/logs?qstash_token=${svc.token}`, { token: null });
      expect(byToken.status).toBe(400);
      expect(((await byToken.json()) as { error: string }).error).toContain("qstash_token");
      // Telemetry headers are no configuration: ignored.
      const telemetry = await svc.api(`/v2/publish/${rx.url}/telemetry?svc-delay=1h`, { method: "POST", body: "x", headers: { "Upstash-Telemetry-Sdk": "x" } });
      expect(telemetry.status).toBe(200);
    } finally {
      await svc.stop();
    }
  });
});
