/**
 * `svcd/testing` as a user's suite uses it: imported by its package name, it starts svcd (from
 * source here, as in the repository), and the official SDK publishes with nothing but the env it
 * hands out. Node's own test runner runs test/testing-kit/node-test.mjs against it too.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { Client } from "@upstash/qstash";
import { startSvcd, toMs, type Svcd } from "svcd/testing";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { testUnless } from "../helpers/skip.ts";

let svc: Svcd;
let rx: Receiver;

beforeAll(async () => {
  svc = await startSvcd({ clock: "manual", dialect: "upstash" });
  rx = await startReceiver((req) => new Response(req.path === "/broken" ? "down" : "ok", { status: req.path === "/broken" ? 500 : 200 }));
});
afterAll(async () => {
  rx?.stop();
  await svc?.stop();
});
beforeEach(async () => {
  await svc.reset();
  rx.received.length = 0;
});

test("a free port, the printed variables, and the official SDK publishes with nothing else", async () => {
  expect(svc.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(svc.env).toMatchObject({ QSTASH_URL: svc.url, QSTASH_TOKEN: svc.token, SVC_URL: svc.url });
  expect(svc.env.QSTASH_CURRENT_SIGNING_KEY).toMatch(/^sig_/);
  const client = new Client({ baseUrl: svc.env.QSTASH_URL, token: svc.env.QSTASH_TOKEN });
  const { messageId } = await client.publishJSON({ url: `${rx.url}/orders`, body: { orderId: 42 } });
  await svc.flush();
  expect(rx.received.map((r) => [r.path, r.text])).toEqual([["/orders", '{"orderId":42}']]);
  const [message] = await svc.messages();
  expect(message).toMatchObject({ messageId, state: "DELIVERED", states: ["CREATED", "ACTIVE", "DELIVERED"] });
});

test("advance() plays out a delay and a whole retry chain on the manual clock; dlq() lists the failure", async () => {
  const client = new Client({ baseUrl: svc.url, token: svc.token });
  const later = await client.publish({ url: `${rx.url}/later`, body: "in an hour", delay: "1h" });
  const broken = await client.publish({ url: `${rx.url}/broken`, body: "x", retries: 2 });
  await svc.flush();
  expect((await svc.messages({ state: "CREATED" })).map((m) => m.messageId)).toEqual([later.messageId]);
  await expect(svc.waitForIdle()).rejects.toThrow(/wait for a later time; with the manual clock only advance\(\)/);
  const before = await svc.now();
  await svc.advance("1h");
  expect(await svc.now()).toBe(before + 3_600_000);
  expect(rx.received.filter((r) => r.path === "/later").map((r) => r.text)).toEqual(["in an hour"]);
  expect(await svc.waitForIdle()).toMatchObject({ inFlight: 0, due: 0, delayed: 0 });
  const [dead] = await svc.dlq();
  expect(dead).toMatchObject({ messageId: broken.messageId, responseStatus: 500 });
  expect(rx.received.filter((r) => r.path === "/broken")).toHaveLength(3);
  expect((await svc.messages({ url: `${rx.url}/broken` }))[0]!.state).toBe("FAILED");
});

test("reset() empties the account; each instance has its own store", async () => {
  const other = await startSvcd();
  try {
    await svc.request(`/v2/publish/${rx.url}/a`, { method: "POST", body: "a" });
    await svc.flush();
    expect(await svc.messages()).toHaveLength(1);
    expect(await other.messages()).toEqual([]);
    await svc.reset();
    expect(await svc.messages()).toEqual([]);
  } finally {
    await other.stop();
  }
  await expect(fetch(`${other.url}/__svc/health`)).rejects.toThrow();
});

test("durations: 1h30m, 90s, 250ms, 2d, or ms; anything else is refused", () => {
  expect(["1h30m", "90s", "250ms", "2d", 5].map(toMs)).toEqual([5_400_000, 90_000, 250, 172_800_000, 5]);
  expect(() => toMs("an hour")).toThrow('"an hour" is not a duration');
  expect(() => toMs("1h 30m")).toThrow("is not a duration");
});

test("a bad flag fails startSvcd with svcd's own line", async () => {
  await expect(startSvcd({ args: ["--clock", "sideways"] })).rejects.toThrow(/exited \(2\) before listening[\s\S]*--clock: must be one of real, manual/);
});

const NODE = Bun.which("node");
testUnless(NODE ? null : "no node on PATH")("node --test: the kit under Node's own runner, and svcd is gone once that process exits without stop()", async () => {
  const proc = Bun.spawn([NODE!, "--test", "--test-reporter=tap", new URL("../testing-kit/node-test.mjs", import.meta.url).pathname], { stdout: "pipe", stderr: "pipe" });
  const [exit, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect({ exit, err }).toEqual({ exit: 0, err: "" });
  expect(out).toContain("# pass 2");
  const pid = Number(/svcd pid (\d+)/.exec(out)?.[1]);
  expect(pid).toBeGreaterThan(0);
  // The kit kills what it started when its process exits: no svcd is left behind.
  let alive = true;
  const deadline = Date.now() + 10_000;
  while (alive && Date.now() < deadline) {
    try {
      process.kill(pid, 0);
      await Bun.sleep(20);
    } catch {
      alive = false;
    }
  }
  expect(alive).toBe(false);
}, 60_000);
