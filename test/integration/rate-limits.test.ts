/**
 * Plan rate limits (issue 24 item 4), on the manual clock: a burst limit per second on the
 * messaging requests that do not publish (429 `Burst-RateLimit-*`, the official client's
 * QstashRatelimitError) and a daily message limit on publishing (429 `RateLimit-*`,
 * QstashDailyRatelimitError), each with the numbers the plan says and a reset the clock reaches.
 * The default account's plan (payg) has neither.
 */
import { Client, QstashDailyRatelimitError, QstashRatelimitError } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { account } from "../helpers/accounts.ts";
import { advance } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const DAY = 24 * 3600 * 1000;
const FREE = account("free-one", { plan: "free" });
const PAYG = account("payg-one", { plan: "payg" });
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver(() => new Response("ok"));
});
afterAll(() => rx.stop());

for (const dialect of ["svc", "upstash"] as const) {
  describe(`${dialect} dialect`, () => {
    let s: TestServer;
    const now = async () => ((await (await s.api("/__svc/status", { token: FREE.token })).json()) as { clock: { now: number } }).clock.now;
    beforeAll(async () => {
      s = await startTestServer({
        config: { dialect, clock: "manual" },
        configFile: { plans: { free: { burstPerSecond: 3, maxMessagesPerDay: 4 } }, accounts: [FREE, PAYG] },
      });
      // Start at the beginning of a second, so the test's requests share one burst window.
      const t = await now();
      await advance(s.api, { ms: 1000 - (t % 1000) });
    });
    afterAll(() => s.stop());
    const publish = (token: string) => s.api(`/v2/publish/${rx.url}/x`, { method: "POST", body: "x", token });

    test("burst: the plan's requests per second, then 429 with Burst-RateLimit-*; the next second admits again", async () => {
      const second = Math.floor((await now()) / 1000);
      for (let i = 0; i < 3; i++) expect((await s.api("/v2/schedules", { token: FREE.token })).status).toBe(200);
      const refused = await s.api("/v2/logs", { token: FREE.token });
      expect(refused.status).toBe(429);
      expect((await refused.json()) as object).toEqual({ error: expect.stringContaining("burst rate limit of 3") });
      expect({
        limit: refused.headers.get("burst-ratelimit-limit"),
        remaining: refused.headers.get("burst-ratelimit-remaining"),
        reset: refused.headers.get("burst-ratelimit-reset"),
        daily: refused.headers.get("ratelimit-limit"),
      }).toEqual({ limit: "3", remaining: "0", reset: String(second + 1), daily: null });
      // Publishing is not burst-limited; the other account is not limited at all.
      expect((await publish(FREE.token)).status).toBe(200);
      for (let i = 0; i < 20; i++) expect((await s.api("/v2/logs", { token: PAYG.token })).status).toBe(200);
      await advance(s.api, { ms: 1000 });
      expect((await s.api("/v2/logs", { token: FREE.token })).status).toBe(200);
    });

    test("daily: the plan's messages per UTC day, then 429 with RateLimit-*; the next day admits again", async () => {
      await advance(s.api, { to: (Math.floor((await now()) / DAY) + 1) * DAY });
      const dayEnd = (Math.floor((await now()) / DAY) + 1) * DAY;
      for (let i = 0; i < 4; i++) expect((await publish(FREE.token)).status).toBe(200);
      const refused = await publish(FREE.token);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: string }).error).toContain("daily message limit of 4");
      expect({
        limit: refused.headers.get("ratelimit-limit"),
        remaining: refused.headers.get("ratelimit-remaining"),
        reset: refused.headers.get("ratelimit-reset"),
      }).toEqual({ limit: "4", remaining: "0", reset: String(dayEnd / 1000) });
      expect((await s.api(`/v2/enqueue/q/${rx.url}/x`, { method: "POST", body: "x", token: FREE.token })).status).toBe(429);
      for (let i = 0; i < 6; i++) expect((await publish(PAYG.token)).status).toBe(200);
      await advance(s.api, { to: dayEnd });
      expect((await publish(FREE.token)).status).toBe(200);
    });

    if (dialect === "upstash")
      test("the official client raises QstashRatelimitError and QstashDailyRatelimitError with the numbers", async () => {
        await advance(s.api, { to: (Math.floor((await now()) / DAY) + 1) * DAY });
        const t = await now();
        const client = new Client({ baseUrl: s.url, token: FREE.token, retry: false });
        for (let i = 0; i < 3; i++) await client.schedules.list();
        const burst = await failure(client.queue({ queueName: "q" }).get());
        expect(burst).toBeInstanceOf(QstashRatelimitError);
        expect(burst).toMatchObject({ status: 429, limit: "3", remaining: "0", reset: String(Math.floor(t / 1000) + 1) });

        for (let i = 0; i < 4; i++) await client.publish({ url: `${rx.url}/sdk`, body: "x" });
        const daily = await failure(client.publishJSON({ url: `${rx.url}/sdk`, body: { n: 5 } }));
        expect(daily).toBeInstanceOf(QstashDailyRatelimitError);
        expect(daily).toMatchObject({ status: 429, limit: "4", remaining: "0", reset: String((Math.floor(t / DAY) + 1) * (DAY / 1000)) });
      });
  });
}
