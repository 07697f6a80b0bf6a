import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { jsonBody } from "../helpers/accounts.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const T0 = Date.UTC(2031, 5, 1, 8, 0, 0);
let s: TestServer;
let rx: Receiver;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(T0);
  s = await startTestServer({ clock });
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

async function publish(destination: string, headers: Record<string, string>, body = "same") {
  const res = await s.api(`/v2/publish/${destination}`, { method: "POST", headers, body });
  return { status: res.status, body: (await res.json()) as any };
}
const createdFor = async (url: string) =>
  ((await (await s.api(`/v2/logs?url=${encodeURIComponent(url)}&state=CREATED`)).json()) as { logs: unknown[] }).logs.length;

describe("deduplication", () => {
  test("the same deduplication id twice within the window: one delivery, 202 with the first id", async () => {
    const url = `${rx.url}/dedup/id`;
    const first = await publish(url, { "Svc-Deduplication-Id": "order-1" });
    expect(first.status).toBe(200);
    const second = await publish(url, { "Svc-Deduplication-Id": "order-1" }, "another body");
    expect(second.status).toBe(202);
    expect(second.body).toEqual({ messageId: first.body.messageId, url, deduplicated: true });
    await rx.waitFor(1, { match: (r) => r.path === "/dedup/id" });
    expect(await createdFor(url)).toBe(1);
    expect(rx.received.filter((r) => r.path === "/dedup/id")).toHaveLength(1);

    // Another destination with the same id is another message.
    expect((await publish(`${rx.url}/dedup/id-elsewhere`, { "Svc-Deduplication-Id": "order-1" })).status).toBe(200);

    // After 10 minutes the id is free again.
    clock.advanceTo(T0 + 10 * 60_000 + 1);
    const later = await publish(url, { "Svc-Deduplication-Id": "order-1" });
    expect(later.status).toBe(200);
    expect(later.body.messageId).not.toBe(first.body.messageId);
    await rx.waitFor(2, { match: (r) => r.path === "/dedup/id" });
  });

  test("content-based deduplication: same destination, body and headers dedupe; a different body does not", async () => {
    const url = `${rx.url}/dedup/content`;
    const h = { "Svc-Content-Based-Deduplication": "true", "Content-Type": "text/plain", "Svc-Forward-X-A": "1" };
    const first = await publish(url, h, "payload");
    const again = await publish(url, h, "payload");
    expect(first.status).toBe(200);
    expect(again.status).toBe(202);
    expect(again.body.messageId).toBe(first.body.messageId);
    expect(again.body.deduplicated).toBe(true);
    expect((await publish(url, h, "other payload")).status).toBe(200);
    expect((await publish(url, { ...h, "Svc-Forward-X-A": "2" }, "payload")).status).toBe(200);
    await rx.waitFor(3, { match: (r) => r.path === "/dedup/content" });
    expect(await createdFor(url)).toBe(3);
  });

  test("a deduplicated publish to a URL Group answers the group's first ids, 202", async () => {
    await s.api("/v2/topics/dedup-group/endpoints", jsonBody("POST", { endpoints: [{ url: `${rx.url}/dg/1` }, { url: `${rx.url}/dg/2` }] }));
    const first = await publish("dedup-group", { "Svc-Deduplication-Id": "g-1" });
    const second = await publish("dedup-group", { "Svc-Deduplication-Id": "g-1" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(202);
    expect(second.body.map((m: any) => m.messageId)).toEqual(first.body.map((m: any) => m.messageId));
    expect(second.body.every((m: any) => m.deduplicated === true)).toBe(true);
  });

  test("duplicates inside one batch; a bad deduplication id is 400", async () => {
    const url = `${rx.url}/dedup/batch`;
    const res = await s.api(
      "/v2/batch",
      jsonBody("POST", [
        { destination: url, headers: { "Svc-Deduplication-Id": "b-1" } },
        { destination: url, headers: { "Svc-Deduplication-Id": "b-1" } },
      ]),
    );
    const body = (await res.json()) as any[];
    expect(body[1]).toEqual({ messageId: body[0].messageId, url, deduplicated: true });
    const bad = await publish(url, { "Svc-Deduplication-Id": "has:colon" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("Svc-Deduplication-Id");
  });
});
