/**
 * The console's steering pages in a real Chromium: flow control, URL Groups, queues, publish and
 * signing keys. Each action is taken in the page as a user takes it and checked through the API
 * and at a real receiver.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { launchBrowser, openConsole, UI_WAIT, watchPage, type ConsoleDriver } from "../helpers/browser.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

// One svcd (manual clock: a rate period passes only when the test says so), one receiver, one Chromium.
let svc: TestServer;
let receiver: Receiver;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let watched: ReturnType<typeof watchPage>;
let ui: ConsoleDriver;
const TEST_TIMEOUT = 30_000;

beforeAll(async () => {
  [svc, receiver, browser] = await Promise.all([startTestServer({ config: { clock: "manual" } }), startReceiver(), launchBrowser()]);
  ({ page, watched, ui } = await openConsole(browser.browser, svc.url, svc.token));
});

afterAll(async () => {
  await browser?.close();
  receiver?.stop();
  await svc?.stop();
});

beforeEach(async () => {
  await svc.api("/__svc/reset", { method: "POST" });
});

const getJson = async <T>(path: string) => (await (await svc.api(path)).json()) as T;
const publish = async (path: string, headers: Record<string, string> = {}, body = "hello") => {
  const res = await svc.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body });
  expect(res.status).toBe(200);
};
const arrivedAt = (path: string) => receiver.received.filter((r) => r.path === path).length;

describe("steering svcd from the console", () => {
  test("flow control: a key's counters follow reset rate, pause, resume, pin and unpin", async () => {
    type Key = { waitListSize: number; rateCount: number; isPaused: boolean; isPinnedParallelism: boolean; parallelismMax: number };
    const key = () => getJson<Key>("/v2/flowControl/partner");
    const flow = { "Svc-Flow-Control-Key": "partner", "Svc-Flow-Control-Value": "rate=2, period=1h" };
    for (let i = 0; i < 3; i++) await publish("/flow", flow);
    await receiver.waitFor(2, { match: (r) => r.path === "/flow" });
    await waitUntil(async () => (await key()).waitListSize === 1, { what: "the third message held by the rate" });

    const card = '[data-flow-key="partner"]';
    const meter = (name: string) => `${card} [data-meter="${name}"] .meter-value`;
    await ui.go("/flow-control");
    await ui.waitForText(meter("waiting"), "1");
    await ui.waitForText(meter("rate"), "2 / 2");

    // A new rate period: the held message goes.
    await ui.clickButton(card, "Reset rate");
    await receiver.waitFor(3, { match: (r) => r.path === "/flow" });
    await ui.waitForText(meter("rate"), "1 / 2");
    await ui.waitForText(meter("waiting"), "0");

    // Paused, a new message waits; resumed, it is delivered.
    await ui.clickButton(card, "Pause");
    await waitUntil(async () => (await key()).isPaused, { what: "key paused" });
    await ui.waitForText(card, "paused");
    await publish("/flow", flow);
    await ui.waitForText(meter("waiting"), "1");
    expect(arrivedAt("/flow")).toBe(3);
    await ui.clickButton(card, "Resume");
    await receiver.waitFor(4, { match: (r) => r.path === "/flow" });
    await ui.waitForNoText(card, "paused");

    await ui.clickButton(card, "Pin…");
    await ui.fill(card, "Parallelism", "1");
    await ui.clickButton(card, "Pin");
    await waitUntil(async () => (await key()).isPinnedParallelism, { what: "parallelism pinned" });
    await ui.waitForText(card, "parallelism pinned");
    await ui.waitForText(meter("parallelism"), "0 / 1");
    await ui.clickButton(card, "Unpin");
    await waitUntil(async () => !(await key()).isPinnedParallelism, { what: "parallelism unpinned" });
    await ui.waitForNoText(card, "parallelism pinned");
  }, TEST_TIMEOUT);

  test("URL Groups: a group is created, gets a second endpoint that receives its publishes, and loses it again", async () => {
    type Group = { endpoints: Array<{ name?: string; url: string }> };
    const endpoints = async () => (await getJson<Group>("/v2/topics/fanout")).endpoints.map((e) => e.url);
    await ui.go("/url-groups");
    await ui.fill(".new-group", "Group name", "fanout");
    await ui.fill(".new-group", "Endpoint URL", `${receiver.url}/fan/a`);
    await ui.clickButton(".new-group", "Create group");
    await page.waitForSelector('[data-group="fanout"]', { timeout: UI_WAIT });
    expect(await endpoints()).toEqual([`${receiver.url}/fan/a`]);

    await ui.fill('[data-group="fanout"]', "Endpoint URL", `${receiver.url}/fan/b`);
    await ui.clickButton('[data-group="fanout"]', "Add endpoint");
    await ui.waitForText('[data-group="fanout"] table', "/fan/b");
    expect((await endpoints()).sort()).toEqual([`${receiver.url}/fan/a`, `${receiver.url}/fan/b`]);
    expect((await svc.api("/v2/publish/fanout", { method: "POST", body: "to both" })).status).toBe(200);
    await receiver.waitFor(1, { match: (r) => r.path === "/fan/a" && r.text === "to both" });
    await receiver.waitFor(1, { match: (r) => r.path === "/fan/b" && r.text === "to both" });

    await ui.clickButton(`[data-group="fanout"] tr[data-endpoint="${receiver.url}/fan/b"]`, "Remove");
    await waitUntil(async () => (await endpoints()).length === 1, { what: "one endpoint left" });
    expect(await endpoints()).toEqual([`${receiver.url}/fan/a`]);
    await ui.waitForText('[data-group="fanout"]', "1 endpoint");
  }, TEST_TIMEOUT);

  test("queues: created with a parallelism, paused (a message waits, lag 1), resumed (delivered), parallelism changed", async () => {
    type Queue = { parallelism: number; paused: boolean; lag: number };
    const queue = () => getJson<Queue>("/v2/queues/jobs");
    await ui.go("/queues");
    await ui.fill("main", "Name", "jobs");
    await ui.fill("main", "Parallelism", "1");
    await ui.clickButton("main", "Save");
    await page.waitForSelector('tr[data-queue="jobs"]', { timeout: UI_WAIT });
    expect(await queue()).toMatchObject({ parallelism: 1, paused: false });

    await ui.clickButton('tr[data-queue="jobs"]', "Pause");
    await waitUntil(async () => (await queue()).paused, { what: "queue paused" });
    await ui.waitForText('tr[data-queue="jobs"]', "paused");
    const enqueued = await svc.api(`/v2/enqueue/jobs/${receiver.url}/job`, { method: "POST", body: "work" });
    expect(enqueued.status).toBe(200);
    await ui.waitForText('tr[data-queue="jobs"] td.num', "1");
    expect(arrivedAt("/job")).toBe(0);

    await ui.clickButton('tr[data-queue="jobs"]', "Resume");
    await receiver.waitFor(1, { match: (r) => r.path === "/job" && r.text === "work" });
    await ui.waitForNoText('tr[data-queue="jobs"]', "paused");

    const field = await page.waitForSelector('tr[data-queue="jobs"] input[type=number]', { timeout: UI_WAIT });
    await field!.click({ clickCount: 3 });
    await field!.type("3");
    await ui.clickButton('tr[data-queue="jobs"]', "Save");
    await waitUntil(async () => (await queue()).parallelism === 3, { what: "parallelism 3" });
  }, TEST_TIMEOUT);

  test("publish: a message with method, body, retries, label and a forwarded header reaches the receiver as sent", async () => {
    await ui.go("/publish");
    await ui.fill("main", "Destination", `${receiver.url}/from-console`);
    await ui.fill("main", "Method", "PUT");
    await ui.fill("main", "Content-Type", "text/plain");
    await ui.fill("main", "Body", "sent from the console");
    await ui.fill("main", "Retries", "2");
    await ui.fill("main", "Label", "console");
    await page.click("details.options:last-of-type > summary");
    await page.type('input[aria-label="Forwarded headers name 1"]', "X-Trace-Id");
    await page.type('input[aria-label="Forwarded headers value 1"]', "trace-7");
    await ui.waitForText("pre.code", "Svc-Forward-X-Trace-Id: trace-7");
    await ui.clickButton("form.publish-form", "Publish");

    const link = await page.waitForSelector(".answers a.mono", { timeout: UI_WAIT });
    const messageId = await link!.evaluate((a) => (a as any).innerText as string);
    expect(messageId).toStartWith("msg_");
    const [delivery] = await receiver.waitFor(1, { match: (r) => r.path === "/from-console" });
    expect(delivery!.method).toBe("PUT");
    expect(delivery!.text).toBe("sent from the console");
    expect(delivery!.headers.get("x-trace-id")).toBe("trace-7");
    expect(delivery!.headers.get("content-type")).toBe("text/plain");
    const { logs } = await getJson<{ logs: Array<{ state: string; maxRetries?: number; label?: string; labels?: string[] }> }>(`/v2/logs?messageId=${messageId}`);
    expect(logs.find((e) => e.state === "CREATED")).toMatchObject({ maxRetries: 2, label: "console" });
  }, TEST_TIMEOUT);

  test("signing keys: shown on demand; rotating makes the next key current", async () => {
    const before = await getJson<{ current: string; next: string }>("/v2/keys");
    await ui.go("/keys");
    await page.waitForSelector("[data-testid=key-current]", { timeout: UI_WAIT });
    expect(await ui.textOf("[data-testid=key-current]")).not.toContain(before.current);
    await ui.clickButton(".secret:has([data-testid=key-current])", "Show");
    await ui.clickButton(".secret:has([data-testid=key-next])", "Show");
    await ui.waitForText("[data-testid=key-current]", before.current);

    await ui.clickButton("main", "Rotate keys");
    await ui.waitForText("[data-testid=key-current]", before.next);
    const after = await getJson<{ current: string; next: string }>("/v2/keys");
    expect(after.current).toBe(before.next);
    expect(after.next).not.toBe(before.next);
    await ui.waitForText("[data-testid=key-next]", after.next);
  }, TEST_TIMEOUT);

  test("fault rules: added on the Test double page, the injected failure marked on the message's timeline, removed", async () => {
    await ui.go("/test-double");
    const rule = JSON.stringify({ kind: "timeout-after-answer", times: 1, match: { url: `${receiver.url}/flaky` } });
    await ui.fill("main", "New rule (JSON)", rule);
    await ui.clickButton("main", "Add rule");
    await ui.waitForText('table[aria-label="Fault rules"]', "timeout-after-answer");
    const [added] = (await getJson<{ rules: Array<{ id: string }> }>("/__svc/faults")).rules;
    expect(added?.id).toMatch(/^fault_/);

    const res = await svc.api(`/v2/publish/${receiver.url}/flaky`, { method: "POST", body: "x", headers: { "Svc-Retries": "1" } });
    const { messageId } = (await res.json()) as { messageId: string };
    await svc.api("/__svc/flush", { method: "POST" });
    await waitUntil(() => arrivedAt("/flaky") === 1, { what: "the receiver answered the first attempt" });
    await page.goto(`${svc.url}/console/messages/${messageId}`);
    await ui.waitForText(".timeline", "injected: timeout-after-answer");

    await ui.go("/test-double");
    await ui.waitForText('table[aria-label="Fault rules"]', "1 / 1");
    await ui.clickButton('table[aria-label="Fault rules"]', "Remove");
    await waitUntil(async () => (await getJson<{ rules: unknown[] }>("/__svc/faults")).rules.length === 0, { what: "the rule removed" });
    await ui.waitForText("main", "No fault rules.");
  }, TEST_TIMEOUT);

  test("the console made no request outside svcd and logged no JavaScript error", () => {
    expect(watched.foreignRequests).toEqual([]);
    expect(watched.errors).toEqual([]);
  });
});
