/**
 * The console in the locale CI runners often give a browser: Chromium started with
 * `LANG=C.UTF-8` reports the language `en-US@posix`, a tag Intl refuses. The console and its
 * charts must work there all the same, and a chart or a page that fails must not take the rest
 * of the console with it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chartPixels, launchBrowser, openConsole, UI_WAIT } from "../helpers/browser.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let svc: TestServer;
let receiver: Receiver;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
const TEST_TIMEOUT = 30_000;

beforeAll(async () => {
  [svc, receiver, browser] = await Promise.all([
    startTestServer({ config: { clock: "manual" } }),
    startReceiver(() => new Response("ok")),
    launchBrowser({ posixLocale: true }),
  ]);
  for (let i = 0; i < 3; i++) {
    const res = await svc.api(`/v2/publish/${receiver.url}/locale/${i}`, { method: "POST", body: "hello" });
    expect(res.status).toBe(200);
  }
  await svc.api("/__svc/flush", { method: "POST" });
});

afterAll(async () => {
  await browser?.close();
  receiver?.stop();
  await svc?.stop();
});

describe("the console in the C.UTF-8 locale (navigator.language en-US@posix)", () => {
  test("the overview renders with its charts, and the navigation works", async () => {
    const { page, watched, ui } = await openConsole(browser.browser, svc.url, svc.token);
    // The premise: this browser reports a language Intl refuses.
    const language = await page.evaluate(() => {
      const tag = (globalThis as any).navigator.languages[0];
      try {
        new Intl.NumberFormat(tag);
        return `${tag} accepted`;
      } catch (e) {
        return `${tag} ${(e as Error).name}`;
      }
    });
    expect(language).toBe("en-US@posix RangeError");

    await ui.waitForText(".topbar", "svcd-dev-user");
    await ui.waitForText(".legend-totals", "Delivered 3");
    expect(await chartPixels(page, "--c-delivered")).toBeGreaterThan(10);
    expect(await page.$$eval(".chart canvas", (c) => c.length)).toBe(2);
    await ui.go("/messages");
    await ui.waitForText("main", "/locale/2");
    expect(watched.errors).toEqual([]);
    expect(watched.foreignRequests).toEqual([]);
    await page.close();
  }, TEST_TIMEOUT);

  test("a chart that cannot be drawn shows a short line; the page around it and the other pages still work", async () => {
    // A canvas without a 2D context, as some hardened browsers give: the chart library throws.
    const { page, watched, ui } = await openConsole(browser.browser, svc.url, svc.token, (tab) =>
      tab.evaluateOnNewDocument(() => {
        (globalThis as any).HTMLCanvasElement.prototype.getContext = () => null;
      }),
    );
    await ui.waitForText(".legend-totals", "Delivered 3");
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("[data-testid=failed-view]").length === 2, { timeout: UI_WAIT });
    const shown = await page.$$eval("[data-testid=failed-view]", (els) => els.map((el) => (el as any).innerText as string));
    for (const line of shown) expect(line).toStartWith("The chart could not be shown: ");
    // The rest of the overview is there, and the navigation goes on.
    expect(await ui.textOf("[data-testid=dlq]")).toBe("0");
    await ui.waitForText(".activity", "/locale/");
    await ui.go("/dlq");
    await ui.waitForText("main h1", "Dead-letter queue");
    // What failed is reported to the browser's console, once per chart.
    expect(watched.errors.filter((e) => e.includes("svcd console: the chart failed"))).toHaveLength(2);
    await page.close();
  }, TEST_TIMEOUT);

  test("a page that fails while it renders says so in one line; the navigation takes the user on", async () => {
    const res = await svc.api(`/v2/publish/${receiver.url}/locale/body`, { method: "POST", body: "a body" });
    const { messageId } = (await res.json()) as { messageId: string };
    await svc.api("/__svc/flush", { method: "POST" });
    // A browser whose base64 decoder fails: the message page cannot show the logged body.
    const { page, watched, ui } = await openConsole(browser.browser, svc.url, svc.token, (tab) =>
      tab.evaluateOnNewDocument(() => {
        (globalThis as any).atob = () => {
          throw new Error("no base64 decoder");
        };
      }),
    );
    await ui.waitForText(".topbar", "svcd-dev-user");
    await page.goto(`${svc.url}/console/messages/${messageId}`);
    await ui.waitForText("[data-testid=failed-view]", "The Messages page could not be shown: no base64 decoder");
    expect(await page.$$eval("nav a", (links) => links.length)).toBeGreaterThan(5);
    await ui.go("/");
    await ui.waitForText(".legend-totals", "Delivered 4");
    expect(await page.$$("[data-testid=failed-view]")).toHaveLength(0);
    expect(watched.errors.some((e) => e.includes("svcd console: the Messages page failed"))).toBe(true);
    await page.close();
  }, TEST_TIMEOUT);
});
