/**
 * The console opened with a read-only token (issue 24 item 2), in a real Chromium: it shows the
 * account's data, says `read-only`, and offers none of the actions the server would refuse.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { launchBrowser, openConsole, type ConsoleDriver } from "../helpers/browser.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { jsonBody } from "../helpers/accounts.ts";

let svc: TestServer;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let ui: ConsoleDriver;
let watched: { errors: string[] };

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  expect((await svc.api("/v2/queues/", jsonBody("POST", { queueName: "emails", parallelism: 2 }))).status).toBe(200);
  ({ page, ui, watched } = await openConsole(browser.browser, svc.url, svc.config.defaultAccount.readOnlyToken));
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

/** The visible buttons' labels inside `scope`. */
const visibleButtons = (scope: string) =>
  page.$$eval(`${scope} button`, (buttons) =>
    buttons.filter((b) => (b as any).offsetParent !== null).map((b) => ((b as any).innerText as string).trim()),
  );

test("read-only: the data is there, the actions are not", async () => {
  await ui.waitForText(".topbar", "read-only");
  const nav = await page.$$eval("nav a", (links) => links.map((a) => (a as any).innerText as string));
  expect(nav.join(" ")).toContain("Queues");
  expect(nav.join(" ")).not.toContain("Publish");
  expect(nav.join(" ")).not.toContain("Test double");

  await ui.go("/queues");
  await ui.waitForText("main", "emails");
  const buttons = await visibleButtons("main");
  for (const action of ["Pause", "Delete", "Save queue"]) expect(buttons).not.toContain(action);

  await ui.go("/keys");
  await ui.waitForText("main", "sig_");
  expect(await visibleButtons("main")).not.toContain("Rotate");
  expect(watched.errors).toEqual([]);
});
