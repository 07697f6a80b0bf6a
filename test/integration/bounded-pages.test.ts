import { afterAll, beforeAll, expect, test } from "bun:test";
import { PAGE_BYTE_BUDGET } from "../../src/http/page.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { flush } from "../helpers/control.ts";

/**
 * A listing page stops growing at its byte budget and hands out a cursor; walking the cursor
 * reaches every entry, and each entry's full bodies stay available on their own.
 */

const MB = 1024 * 1024;
/** A recognisable answer body of `size` bytes for message `i`. */
const answerOf = (i: number, size: number) => new Uint8Array(size).fill(65 + i);

let rx: Receiver;
let s: TestServer;
const sizes = [MB, MB, MB, MB, MB, MB, 5 * MB, MB];
beforeAll(async () => {
  rx = await startReceiver((req) => {
    const i = Number(req.path.split("/").at(-1));
    return new Response(answerOf(i, sizes[i]!), { status: 500 });
  });
  s = await startTestServer();
  for (let i = 0; i < sizes.length; i++) {
    const res = await s.api(`/v2/publish/${rx.url}/big/${i}`, {
      method: "POST",
      headers: { "Svc-Retries": "0" },
      body: new Uint8Array(512 * 1024).fill(97 + i),
    });
    expect(res.status).toBe(200);
  }
  await flush(s.api);
}, 60_000);
afterAll(async () => {
  rx.stop();
  await s.stop();
});

/** Walks every page of `path`, checking each stays within the budget (unless it holds one entry). */
async function walk(path: string, key: string): Promise<Array<Record<string, any>>> {
  const all: Array<Record<string, any>> = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await s.api(`${path}${path.includes("?") ? "&" : "?"}${cursor ? `cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const page = JSON.parse(text) as Record<string, any>;
    const entries = page[key] as Array<Record<string, any>>;
    expect(entries.length).toBeGreaterThan(0);
    if (entries.length > 1) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(PAGE_BYTE_BUDGET);
    all.push(...entries);
    cursor = page.cursor;
    pages++;
  } while (cursor);
  expect(pages).toBeGreaterThan(1);
  return all;
}

test("DLQ pages with large answers stay within the byte budget, and the cursor reaches every entry", async () => {
  const entries = await walk("/v2/dlq", "messages");
  expect(entries.map((e) => e.url).sort()).toEqual(sizes.map((_, i) => `${rx.url}/big/${i}`).sort());
  expect(new Set(entries.map((e) => e.dlqId)).size).toBe(sizes.length);
  // The listing carries whole bodies; an entry larger than the budget came on a page of its own.
  for (const e of entries) {
    const i = Number(String(e.url).split("/").at(-1));
    expect(Buffer.from(e.responseBody ?? e.responseBodyBase64, e.responseBody ? "utf8" : "base64").length).toBe(sizes[i]!);
  }
});

test("one DLQ entry answers its full bodies", async () => {
  const [first] = (await (await s.api("/v2/dlq?count=1")).json()).messages as Array<{ dlqId: string }>;
  const one = (await (await s.api(`/v2/dlq/${first!.dlqId}`)).json()) as Record<string, any>;
  const i = Number(String(one.url).split("/").at(-1));
  const answer = Buffer.from(one.responseBody ?? one.responseBodyBase64, one.responseBody ? "utf8" : "base64");
  expect(answer.equals(Buffer.from(answerOf(i, sizes[i]!)))).toBe(true);
  expect(Buffer.from(one.body ?? one.bodyBase64, one.body ? "utf8" : "base64").length).toBe(512 * 1024);
});

test("log pages with large message bodies stay within the byte budget, and the cursor reaches every entry", async () => {
  for (const path of ["/v2/logs", "/v2/events"]) {
    const entries = await walk(`${path}?count=1000`, path === "/v2/logs" ? "logs" : "events");
    const created = entries.filter((e) => e.state === "CREATED");
    expect(created).toHaveLength(sizes.length);
    for (const e of created) expect(Buffer.from(e.body, "base64").length).toBe(512 * 1024);
    expect(entries.filter((e) => e.state === "FAILED")).toHaveLength(sizes.length);
  }
});
