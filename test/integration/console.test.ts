import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { chartPixels, launchBrowser, openConsole, UI_WAIT, watchPage, type ConsoleDriver } from "../helpers/browser.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

// One svcd (manual clock), one receiver and one Chromium for the whole file; each test resets the account.
let svc: TestServer;
let receiver: Receiver;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let watched: ReturnType<typeof watchPage>;
let ui: ConsoleDriver;
// `SVCD_SCREENSHOTS=docs/img bun test test/integration/console` refreshes the docs' pictures.
/** Each test drives a browser through several page loads; bun's default 5 s per test is too tight under load. */
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
  receiver.setHandler(undefined);
});

const publish = async (path: string, headers: Record<string, string> = {}, body = "hello") => {
  const res = await svc.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
};

describe("web console in a real browser", () => {
  test("the banner's link opens the console, keeps the token out of the address bar, and / leads there", async () => {
    await page.waitForSelector("nav a[aria-current=page]", { timeout: UI_WAIT });
    expect(page.url()).toBe(`${svc.url}/console`);
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem("svcd.console.token"))).toBe(svc.token);
    await ui.waitForText(".topbar", "svcd-dev-user");
    expect(await ui.textOf(".topbar")).toContain("manual clock");

    // A browser asking for / is sent to the console; an API client still gets the JSON 404.
    await page.goto(`${svc.url}/`);
    await page.waitForSelector("nav a[aria-current=page]", { timeout: UI_WAIT });
    expect(page.url()).toBe(`${svc.url}/console`);
    const api = await fetch(`${svc.url}/`);
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ error: "not found: GET /" });
  }, TEST_TIMEOUT);

  test("without a token it asks for one, and refuses a wrong one", async () => {
    const other = await browser.browser.newPage();
    const otherWatch = watchPage(other, svc.url);
    try {
      await other.goto(`${svc.url}/console/dlq`);
      await other.waitForSelector(".login input[type=password]", { timeout: UI_WAIT });
      await other.type(".login input", "wrong-token");
      await other.click(".login button[type=submit]");
      await other.waitForSelector(".login .error-box", { timeout: UI_WAIT });
      await other.type(".login input", "x", { delay: 0 });
      await other.$eval(".login input", (el) => ((el as any).value = ""));
      await other.type(".login input", svc.token);
      await other.click(".login button[type=submit]");
      await other.waitForSelector("nav a[aria-current=page][href='/console/dlq']", { timeout: UI_WAIT });
      expect(otherWatch.errors).toEqual([]);
      expect(otherWatch.foreignRequests).toEqual([]);
    } finally {
      await other.close();
      await page.bringToFront();
    }
  }, TEST_TIMEOUT);

  test("a message published through the API shows up live, and its timeline follows it to DELIVERED", async () => {
    await ui.go("/messages");
    const messageId = await publish("/orders?id=7", { "content-type": "application/json", "Svc-Label": "orders" }, '{"order":7}');
    await svc.api("/__svc/flush", { method: "POST" });
    await receiver.waitFor(1);

    // No reload: the page follows the server's event stream.
    await page.waitForSelector("[data-live=stream]", { timeout: UI_WAIT });
    await page.waitForSelector(`a[href="/console/messages/${messageId}"]`, { timeout: UI_WAIT });
    await page.click(`td a[href="/console/messages/${messageId}"]`);
    await ui.waitForText(".timeline", "DELIVERED");
    const timeline = await page.$$eval(".timeline li > .badge:first-child", (els) => els.map((e) => (e as any).innerText));
    expect(timeline[0]).toBe("CREATED");
    expect(timeline.at(-1)).toBe("DELIVERED");
    expect(await ui.textOf("main")).toContain('"order": 7');
    expect(await ui.textOf("main")).toContain(`${receiver.url}/orders?id=7`);
    await ui.waitForText("details.attempt", "200");
  }, TEST_TIMEOUT);

  test("a DLQ entry retried from the console is delivered", async () => {
    receiver.setHandler(() => new Response("down", { status: 503 }));
    await publish("/billing/invoice", { "Svc-Retries": "0", "Svc-Label": "billing" }, "other");
    await publish("/orders/sync", { "Svc-Retries": "0", "Svc-Label": "orders,nightly" }, "other");
    const failedId = await publish("/fragile", { "Svc-Retries": "0" }, "retry me");
    await svc.api("/__svc/flush", { method: "POST" });
    const dlqIds = async () => ((await (await svc.api("/v2/dlq")).json()) as { messages: Array<{ dlqId: string; messageId: string }> }).messages;
    await waitUntil(async () => (await dlqIds()).length === 3, { what: "the DLQ entries" });
    const entry = (await dlqIds()).find((m) => m.messageId === failedId)!;

    await ui.go("/dlq");
    await page.waitForSelector(`td a[href="/console/dlq/${entry.dlqId}"]`, { timeout: UI_WAIT });
    await ui.waitForText("table", "503");
    await ui.shoot("console-dlq.png");

    receiver.setHandler(undefined);
    await page.click(`td a[href="/console/dlq/${entry.dlqId}"]`);
    await ui.waitForText(".page-head", "DLQ entry");
    expect(await ui.textOf("main")).toContain("retry me");
    expect(await ui.textOf("main")).toContain(failedId);
    await ui.clickButton(".page-head", "Retry");

    // The console opens the new message; it is delivered and the DLQ is empty.
    await page.waitForFunction((old) => /^\/console\/messages\/msg_/.test((globalThis as any).location.pathname) && !(globalThis as any).location.pathname.endsWith(old), { timeout: UI_WAIT }, failedId);
    await svc.api("/__svc/flush", { method: "POST" });
    await ui.waitForText(".timeline", "DELIVERED");
    await receiver.waitFor(1, { match: (r) => r.text === "retry me" && r.path === "/fragile" && r.headers.get("svc-retried") === "0" && r.receivedAt > 0 });
    expect((await dlqIds()).map((m) => m.messageId)).not.toContain(failedId);
    expect((await dlqIds()).length).toBe(2);

    // The failed message made one attempt (its ERROR and FAILED entries are that one attempt).
    await page.goto(`${svc.url}/console/messages/${failedId}`);
    await ui.waitForText(".timeline", "FAILED");
    await ui.waitForText("main h2", "Attempts (1)");
    expect(await ui.textOf(".fields")).toContain("0 of 0");
  }, TEST_TIMEOUT);

  test("a schedule is paused and resumed from the console", async () => {
    const created = await svc.api(`/v2/schedules/${receiver.url}/tick`, { method: "POST", headers: { "Svc-Cron": "*/5 * * * *", "Svc-Schedule-Id": "tick" } });
    expect(created.status).toBe(200);
    const isPaused = async () => ((await (await svc.api("/v2/schedules/tick")).json()) as { isPaused: boolean }).isPaused;

    await ui.go("/schedules");
    await page.waitForSelector('tr[data-schedule="tick"]', { timeout: UI_WAIT });
    await ui.clickButton('tr[data-schedule="tick"]', "Pause");
    await waitUntil(isPaused, { what: "schedule paused" });
    await ui.waitForText('tr[data-schedule="tick"]', "paused");
    await ui.clickButton('tr[data-schedule="tick"]', "Resume");
    await waitUntil(async () => !(await isPaused()), { what: "schedule resumed" });
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('tr[data-schedule="tick"]')?.textContent?.includes("paused"), { timeout: UI_WAIT });
  }, TEST_TIMEOUT);

  test("advancing the manual clock from the console delivers a delayed message", async () => {
    const messageId = await publish("/later", { "Svc-Delay": "1h" }, "an hour later");
    await ui.go("/test-double");
    // The MCP card: this server's /mcp and a client configuration naming it, the token masked.
    await ui.waitForText("[data-testid=mcp-url]", `${svc.url}/mcp`);
    const config = JSON.parse(await page.$eval("[data-testid=mcp-config]", (el) => el.textContent ?? ""));
    expect(config.mcpServers.svcd).toMatchObject({ type: "http", url: `${svc.url}/mcp` });
    expect(config.mcpServers.svcd.headers.Authorization).not.toContain(svc.token);
    await ui.clickButton("main", "+10m");
    await ui.waitForText(".toast", "timer");
    expect(receiver.received.filter((r) => r.path === "/later")).toEqual([]);

    await ui.clickButton("main", "+1h");
    await receiver.waitFor(1, { match: (r) => r.path === "/later" && r.text === "an hour later" });
    await waitUntil(async () => ((await (await svc.api(`/v2/logs?messageId=${messageId}&state=DELIVERED`)).json()) as { logs: unknown[] }).logs.length === 1, {
      what: "the delayed message logged DELIVERED",
    });
  }, TEST_TIMEOUT);

  test("the overview charts the statistics with drawn points, and shows live counts", async () => {
    receiver.setHandler((r) => (r.path.endsWith("/4") ? new Response("no", { status: 500 }) : new Response("ok")));
    for (let i = 0; i < 5; i++) await publish(`/chart/${i}`, { "Svc-Retries": "0" });
    await svc.api("/__svc/flush", { method: "POST" });
    await publish("/chart/later", { "Svc-Delay": "1d" });

    await ui.go("/");
    await ui.waitForText(".legend-totals", "Delivered 4");
    await ui.waitForText(".legend-totals", "Failed (to DLQ) 1");
    await page.waitForFunction(() => (globalThis as any).document.querySelector("[data-testid=delayed]")?.textContent === "1", { timeout: UI_WAIT });
    // The "Delivered" series is drawn: its colour appears on the chart's canvas.
    expect(await chartPixels(page, "--c-delivered")).toBeGreaterThan(10);
    await ui.shoot("console-overview.png");
  }, TEST_TIMEOUT);

  test("keyboard navigation and a narrow window", async () => {
    await ui.go("/");
    await page.keyboard.press("g");
    await page.keyboard.press("d");
    await page.waitForFunction(() => (globalThis as any).location.pathname === "/console/dlq", { timeout: UI_WAIT });
    await page.keyboard.press("?");
    await page.waitForSelector("[role=dialog]", { timeout: UI_WAIT });
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !(globalThis as any).document.querySelector("[role=dialog]"), { timeout: UI_WAIT });

    await page.setViewport({ width: 420, height: 800 });
    try {
      await page.waitForFunction(() => (globalThis as any).getComputedStyle((globalThis as any).document.querySelector(".menu-button")!).display !== "none", { timeout: UI_WAIT });
      expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth + 1)).toBe(true);
      await page.click(".menu-button");
      await page.click('nav a[href="/console/schedules"]');
      await page.waitForFunction(() => (globalThis as any).location.pathname === "/console/schedules", { timeout: UI_WAIT });
    } finally {
      await page.setViewport({ width: 1280, height: 800 });
    }
  }, TEST_TIMEOUT);

  test("the console made no request outside svcd and logged no JavaScript error", () => {
    expect(watched.foreignRequests).toEqual([]);
    expect(watched.errors).toEqual([]);
  }, TEST_TIMEOUT);
});
