/**
 * Contract tests: svcd in the `upstash` dialect driven by the hosted service's official SDK,
 * `@upstash/qstash` (its Client and its Receiver), unchanged. The same suite runs against an
 * in-process server and against the compiled binary; between tests it uses svcd's own control
 * plane over HTTP (`/__svc/reset`, `/__svc/flush`), as a user's test suite would.
 */
import { Client, QstashError, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, spawnServer } from "../helpers/process.ts";
import { startReceiver, type ReceivedRequest, type Receiver as TestReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";

interface Target {
  url: string;
  token: string;
  /** What a spawned binary printed (stdout and stderr). */
  output?: () => string;
  stop(): Promise<void>;
}

const ROOT = new URL("../..", import.meta.url).pathname;

async function inProcess(): Promise<Target> {
  const s = await startTestServer({ config: { dialect: "upstash" } });
  return { url: s.url, token: s.token, stop: () => s.stop() };
}

/** `npm run build`'s script, into a temp dir; started from another temp dir, as a user would. */
async function compiledBinary(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "svcd-contract-"));
  const binary = join(dir, "svcd");
  const build = Bun.spawn([BUN, "scripts/build.ts", binary], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if ((await build.exited) !== 0) throw new Error(await new Response(build.stderr).text());
  const cwd = join(dir, "run");
  mkdirSync(cwd);
  const token = "contract-token";
  const server = await spawnServer([binary, "--port", "0", "--memory", "--dialect", "upstash"], { cwd, env: { SVC_TOKEN: token } });
  const firstLine = server.output().split("\n")[0]!;
  const url = /^svcd listening on (http:\/\/\S+)/.exec(firstLine)?.[1];
  if (!url) throw new Error(`unexpected first line: ${firstLine}`);
  return {
    url,
    token,
    output: server.output,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function contractSuite(name: string, start: () => Promise<Target>) {
  describe(name, () => {
    let target: Target;
    let rx: TestReceiver;
    let client: Client;
    let keys: { current: string; next: string };

    const control = async (path: string) => {
      const res = await fetch(`${target.url}/__svc/${path}`, { method: "POST", headers: { authorization: `Bearer ${target.token}` } });
      expect(res.status).toBe(200);
    };
    const only = (path: string) => rx.received.filter((r) => r.path === path);

    beforeAll(async () => {
      target = await start();
      rx = await startReceiver((req) => new Response(req.path.startsWith("/fail") ? "nope" : "ok", { status: req.path.startsWith("/fail") ? 500 : 200 }));
      client = new Client({ baseUrl: target.url, token: target.token, retry: false });
      keys = (await client.http.request({ method: "GET", path: ["v2", "keys"] })) as { current: string; next: string };
    }, 180_000);
    afterAll(async () => {
      rx?.stop();
      await target?.stop();
    });
    beforeEach(async () => {
      await control("reset");
      rx.received.length = 0;
    });

    test("keys: GET /v2/keys through the SDK's requester", () => {
      expect(keys.current).toMatch(/^sig_/);
      expect(keys.next).toMatch(/^sig_/);
      expect(keys.current).not.toBe(keys.next);
    });

    test("the banner exports QSTASH_* so an unconfigured Client and Receiver find svcd", () => {
      if (!target.output) return; // in process: nothing is printed
      const out = target.output();
      expect(out).toContain(`export QSTASH_URL=${target.url}\n`);
      expect(out).toContain(`export QSTASH_TOKEN=${target.token}\n`);
      expect(out).toContain(`export QSTASH_CURRENT_SIGNING_KEY=${keys.current}\n`);
      expect(out).toContain(`export QSTASH_NEXT_SIGNING_KEY=${keys.next}\n`);
    });

    test("publishJSON answers { messageId, url } and delivers in the upstash dialect", async () => {
      const url = `${rx.url}/orders?source=sdk`;
      const res = await client.publishJSON({ url, body: { order: 42 }, headers: { "X-Tenant": "acme" }, retries: 2 });
      expect(res).toEqual({ messageId: expect.stringMatching(/^msg_/), url });
      await control("flush");
      const [delivery] = only("/orders?source=sdk");
      expect(JSON.parse(delivery!.text)).toEqual({ order: 42 });
      expect(delivery!.headers.get("content-type")).toBe("application/json");
      expect(delivery!.headers.get("x-tenant")).toBe("acme");
      expect(delivery!.headers.get("user-agent")).toBe("Upstash-QStash");
      expect(delivery!.headers.get("upstash-message-id")).toBe(res.messageId);
      expect(delivery!.headers.get("upstash-retried")).toBe("0");
      expect(delivery!.headers.get("upstash-signature")).toBeTruthy();
    });

    test("Receiver.verify accepts a delivery (signature, body, url) and rejects tampering", async () => {
      await client.publish({ url: `${rx.url}/verify`, body: "signed body" });
      await control("flush");
      const [d] = only("/verify") as [ReceivedRequest];
      const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
      const signature = d.headers.get("upstash-signature")!;
      expect(await receiver.verify({ signature, body: d.text, url: `${rx.url}/verify` })).toBe(true);
      await expect(receiver.verify({ signature, body: "other body", url: `${rx.url}/verify` })).rejects.toThrow();
      await expect(receiver.verify({ signature, body: d.text, url: `${rx.url}/elsewhere` })).rejects.toThrow();
      const wrongKeys = new Receiver({ currentSigningKey: "sig_wrong", nextSigningKey: "sig_wrong_too" });
      await expect(wrongKeys.verify({ signature, body: d.text })).rejects.toThrow();
    });

    test("a callback carries the answer and verifies with the Receiver against the callback URL", async () => {
      const { messageId } = await client.publishJSON({ url: `${rx.url}/with-callback`, body: { n: 1 }, callback: `${rx.url}/callback` });
      await control("flush");
      const [cb] = only("/callback") as [ReceivedRequest];
      const body = JSON.parse(cb.text);
      expect(body).toMatchObject({ status: 200, sourceMessageId: messageId, url: `${rx.url}/with-callback`, retried: 0 });
      expect(Buffer.from(body.body, "base64").toString()).toBe("ok");
      const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
      expect(await receiver.verify({ signature: cb.headers.get("upstash-signature")!, body: cb.text, url: `${rx.url}/callback` })).toBe(true);
    });

    test("messages: get a pending message, cancel one, cancel many, cancel all", async () => {
      const { messageId } = await client.publishJSON({ url: `${rx.url}/later`, body: { a: 1 }, delay: 3600, headers: { "X-Trace": "t1" } });
      const message = await client.messages.get(messageId);
      expect(message).toMatchObject({ messageId, url: `${rx.url}/later`, method: "POST", maxRetries: 3 });
      expect(message.header?.["X-Trace"]).toEqual(["t1"]);
      expect(message.notBefore! - message.createdAt).toBe(3600_000);
      expect(await client.messages.cancel(messageId)).toEqual({ cancelled: 1 });
      const gone = await client.messages.get(messageId).catch((e) => e);
      expect(gone).toBeInstanceOf(QstashError);
      expect((gone as QstashError).status).toBe(404);

      const ids = await Promise.all([1, 2, 3].map(async (n) => (await client.publish({ url: `${rx.url}/later/${n}`, body: "x", delay: 3600 })).messageId));
      expect(await client.messages.cancel([ids[0]!, ids[1]!])).toEqual({ cancelled: 2 });
      expect((await client.messages.get(ids[2]!)).messageId).toBe(ids[2]!);
      expect(await client.messages.cancel({ all: true })).toEqual({ cancelled: 1 });
    });

    test("DLQ: list, get by id, filter, delete one, delete all", async () => {
      const failed = await Promise.all(["a", "b", "c"].map(async (n) => (await client.publish({ url: `${rx.url}/fail/${n}`, body: n, retries: 0 })).messageId));
      await control("flush");
      const { messages, cursor } = await client.dlq.listMessages();
      expect(cursor).toBeUndefined();
      expect(messages.map((m) => m.messageId).sort()).toEqual([...failed].sort());
      const first = messages.find((m) => m.messageId === failed[0])!;
      expect(first).toMatchObject({ url: `${rx.url}/fail/a`, responseStatus: 500, responseBody: "nope", maxRetries: 0 });
      expect(first.dlqId).toMatch(/^\d+-\d+$/);

      const byId = await client.dlq.listMessages({ dlqIds: [first.dlqId] });
      expect(byId.messages.map((m) => m.dlqId)).toEqual([first.dlqId]);
      const byUrl = await client.dlq.listMessages({ filter: { url: `${rx.url}/fail/b` } });
      expect(byUrl.messages.map((m) => m.messageId)).toEqual([failed[1]!]);
      const paged = await client.dlq.listMessages({ count: 2 });
      expect(paged.messages).toHaveLength(2);
      const rest = await client.dlq.listMessages({ count: 2, cursor: paged.cursor });
      expect(rest.messages).toHaveLength(1);

      expect(await client.dlq.delete(first.dlqId)).toEqual({ deleted: 1 });
      expect((await client.dlq.listMessages({ dlqIds: [first.dlqId] })).messages).toEqual([]);
      expect(await client.dlq.delete({ all: true })).toEqual({ deleted: 2 });
      expect((await client.dlq.listMessages()).messages).toEqual([]);
    });

    test("DLQ retry re-publishes the dead letter", async () => {
      await client.publish({ url: `${rx.url}/fail/retry`, body: "again", retries: 0 });
      await control("flush");
      const [entry] = (await client.dlq.listMessages()).messages;
      const res = await client.dlq.retry([entry!.dlqId]);
      expect(res.responses).toEqual([{ messageId: expect.stringMatching(/^msg_/) }]);
      expect(res.cursor).toBeUndefined();
      await control("flush");
      expect(only("/fail/retry")).toHaveLength(2);
    });

    test("logs: by message ids, by filter with count and cursor, and the events alias", async () => {
      const a = await client.publish({ url: `${rx.url}/logged/a`, body: "a" });
      const b = await client.publish({ url: `${rx.url}/logged/b`, body: "b" });
      await control("flush");
      const mine = await client.logs({ messageIds: [a.messageId] });
      expect(mine.logs.map((l) => l.state)).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
      expect(mine.logs.every((l) => l.messageId === a.messageId && l.url === `${rx.url}/logged/a`)).toBe(true);
      const both = await client.logs({ messageIds: [a.messageId, b.messageId] });
      expect(both.logs).toHaveLength(6);

      const page1 = await client.logs({ filter: { state: "DELIVERED" }, count: 1 });
      expect(page1.logs).toHaveLength(1);
      expect(page1.cursor).toBeTruthy();
      const page2 = await client.logs({ filter: { state: "DELIVERED" }, count: 1, cursor: page1.cursor });
      expect(page2.logs[0]!.messageId).not.toBe(page1.logs[0]!.messageId);
      expect(new Set([page1.logs[0]!.messageId, page2.logs[0]!.messageId])).toEqual(new Set([a.messageId, b.messageId]));
      const byUrl = await client.logs({ filter: { url: `${rx.url}/logged/b` } });
      expect(new Set(byUrl.logs.map((l) => l.messageId))).toEqual(new Set([b.messageId]));
      expect((await client.events({ messageIds: [b.messageId] })).events).toHaveLength(3);
    });

    test("urlGroups: addEndpoints, get, list, publish fan-out, removeEndpoints, delete", async () => {
      await client.urlGroups.addEndpoints({ name: "team", endpoints: [{ url: `${rx.url}/g/a`, name: "a" }, { url: `${rx.url}/g/b` }] });
      const group = await client.urlGroups.get("team");
      expect(group.name).toBe("team");
      expect(group.endpoints.map((e) => e.url).sort()).toEqual([`${rx.url}/g/a`, `${rx.url}/g/b`]);
      expect((await client.urlGroups.list()).map((g) => g.name)).toEqual(["team"]);

      const published = await client.publishJSON({ urlGroup: "team", body: { to: "everyone" } });
      expect(Array.isArray(published)).toBe(true);
      expect((published as Array<{ messageId: string; url: string }>).map((p) => p.url).sort()).toEqual([`${rx.url}/g/a`, `${rx.url}/g/b`]);
      await control("flush");
      expect(only("/g/a")).toHaveLength(1);
      expect(only("/g/b")).toHaveLength(1);
      expect(only("/g/a")[0]!.headers.get("upstash-topic-name")).toBe("team");

      await client.urlGroups.removeEndpoints({ name: "team", endpoints: [{ url: `${rx.url}/g/b` }] });
      expect((await client.urlGroups.get("team")).endpoints.map((e) => e.url)).toEqual([`${rx.url}/g/a`]);
      await client.urlGroups.delete("team");
      expect(await client.urlGroups.list()).toEqual([]);
    });

    test("schedules: create, get, list, pause, resume, delete", async () => {
      const before = Date.now();
      const { scheduleId } = await client.schedules.create({
        destination: `${rx.url}/cron`,
        cron: "*/5 * * * *",
        body: JSON.stringify({ tick: true }),
        retries: 1,
        headers: { "X-From": "schedule" },
      });
      expect(scheduleId).toMatch(/^scd_/);
      const schedule = await client.schedules.get(scheduleId);
      expect(schedule).toMatchObject({ scheduleId, cron: "*/5 * * * *", destination: `${rx.url}/cron`, method: "POST", isPaused: false, retries: 1 });
      // The next run after the creation (the server's clock is real here).
      expect(schedule.nextScheduleTime!).toBeGreaterThan(before);
      expect((await client.schedules.list()).map((x) => x.scheduleId)).toEqual([scheduleId]);
      await client.schedules.pause({ schedule: scheduleId });
      expect((await client.schedules.get(scheduleId)).isPaused).toBe(true);
      await client.schedules.resume({ schedule: scheduleId });
      expect((await client.schedules.get(scheduleId)).isPaused).toBe(false);
      await client.schedules.delete(scheduleId);
      expect(await client.schedules.list()).toEqual([]);
    });

    test("queue: upsert, get, list, enqueueJSON, pause, resume, delete", async () => {
      const queue = client.queue({ queueName: "jobs" });
      await queue.upsert({ parallelism: 1 });
      expect(await queue.get()).toMatchObject({ name: "jobs", parallelism: 1, paused: false, lag: 0 });
      expect((await queue.list()).map((q) => q.name)).toEqual(["jobs"]);

      await queue.pause();
      expect((await queue.get()).paused).toBe(true);
      const { messageId } = await queue.enqueueJSON({ url: `${rx.url}/queued`, body: { job: 1 } });
      expect(messageId).toMatch(/^msg_/);
      await control("flush");
      expect(only("/queued")).toHaveLength(0);
      expect((await queue.get()).lag).toBe(1);
      await queue.resume();
      await control("flush");
      expect(only("/queued")).toHaveLength(1);
      expect(JSON.parse(only("/queued")[0]!.text)).toEqual({ job: 1 });
      await queue.delete();
      expect(await queue.list()).toEqual([]);
    });
  });
}

contractSuite("@upstash/qstash SDK against svcd (in process, upstash dialect)", inProcess);
contractSuite("@upstash/qstash SDK against the compiled binary (upstash dialect)", compiledBinary);
