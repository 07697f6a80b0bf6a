/**
 * "Rerun from here" on a run's page of the console, in a real Chromium, against runs of the
 * official workflow SDK (`@upstash/workflow`) served by a local app on svcd in the hosted dialect:
 * the dialog lists what the new run keeps, with the kept steps' results to change; the new run
 * opens and names the run and step it came from.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { launchBrowser, openConsole, UI_WAIT, type ConsoleDriver } from "../helpers/browser.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let watched: { errors: string[]; foreignRequests: string[] };
let ui: ConsoleDriver;
const TEST_TIMEOUT = 30_000;

beforeAll(async () => {
  [w, browser] = await Promise.all([startWorkflowWorld(), launchBrowser()]);
  ({ page, watched, ui } = await openConsole(browser.browser, w.svc.url, w.svc.token));
});
afterAll(async () => {
  await browser?.close();
  await w?.stop();
});

const runPath = (runId: string) => `/console/workflows/runs/${runId}`;
const runRow = (runId: string) => `tr:has(a[href="${runPath(runId)}"])`;
const stateOf = async (runId: string) => (await w.run(runId))?.workflowState;

test("a failed run is rerun from its failed step with a changed result; the new run opens and names where it came from", async () => {
  let fixed = false;
  let loads = 0;
  const charged: number[] = [];
  const url = w.serve<{ order: string }>("/wf/console-rerun", async (context) => {
    const order = await context.run("load", () => (loads++, { id: context.requestPayload.order }));
    const price = await context.run("price", () => 10);
    return await context.run("charge", () => {
      if (!fixed) throw new Error("card declined");
      charged.push(price);
      return `charged ${order.id} ${price}`;
    });
  });
  const { workflowRunId } = await w.client.trigger({ url, body: { order: "o-7" }, retries: 0 });
  await w.flush();
  await waitUntil(async () => (await stateOf(workflowRunId)) === "RUN_FAILED", { what: "the run failed" });

  await ui.go("/workflows");
  await page.waitForSelector(`${runRow(workflowRunId)} a.id`, { timeout: UI_WAIT });
  await page.click(`${runRow(workflowRunId)} a.id`);
  await ui.waitForPath(runPath(workflowRunId));
  await ui.waitForText('.wf-group.next [data-step="charge"]', "card declined");

  // The failed step's "Rerun from here": the dialog keeps load and price, whose results can change.
  await ui.clickButton('.wf-group.next [data-step="charge"]', "Rerun from here");
  await ui.waitForText(".rerun-dialog", "Rerun from charge");
  expect(await ui.textOf(".rerun-dialog")).toContain("keeps the 2 steps before it");
  const fields = await page.$$eval(".rerun-dialog label.field > span", (spans) => spans.map((s) => (s as any).innerText));
  expect(fields).toEqual(["load", "price", "Label"]);
  expect(await page.$eval(".rerun-dialog label.field:nth-of-type(2) textarea", (t) => (t as any).value)).toBe("10");

  fixed = true;
  await ui.fill(".rerun-dialog", "price", "25");
  await ui.fill(".rerun-dialog", "Label", "retried-from-console");
  await ui.shoot("console-workflow-rerun.png");
  await ui.clickButton(".rerun-dialog", "Rerun");
  // The new run opens: its page names the run it came from and the step.
  await page.waitForFunction((source) => {
    const path = (globalThis as any).location.pathname as string;
    return path.startsWith("/console/workflows/runs/") && path !== source;
  }, { timeout: UI_WAIT }, runPath(workflowRunId));
  const rerunId = new URL(page.url()).pathname.split("/").at(-1)!;
  await w.flush();
  await ui.waitForText("[data-testid=run-result]", "charged o-7 25");
  expect(await ui.textOf("[data-testid=rerun-of]")).toBe(`${workflowRunId} from charge`);
  expect(await ui.textOf("main")).toContain("retried-from-console");
  expect(charged).toEqual([25]);
  expect(loads).toBe(1);
  expect(await w.run(rerunId)).toMatchObject({ workflowState: "RUN_SUCCESS", rerunOf: { workflowRunId, stepName: "charge" } });

  // Back to the source: still failed.
  await page.click("[data-testid=rerun-of] a");
  await ui.waitForPath(runPath(workflowRunId));
  await ui.waitForText(".page-head, main", "RUN_FAILED");
  expect(await stateOf(workflowRunId)).toBe("RUN_FAILED");
}, TEST_TIMEOUT);

test("from a branch of a parallel group the dialog keeps the steps before the group; a bad result is refused in the dialog", async () => {
  const ran: string[] = [];
  const url = w.serve("/wf/console-rerun-parallel", async (context) => {
    const base = await context.run("base", () => (ran.push("base"), 3));
    const [a, b] = await Promise.all([context.run("left", () => (ran.push("left"), base)), context.run("right", () => (ran.push("right"), base * 2))]);
    return await context.run("sum", () => a + b);
  });
  const { workflowRunId } = await w.client.trigger({ url });
  await w.flush();
  await waitUntil(async () => (await stateOf(workflowRunId)) === "RUN_SUCCESS", { what: "the run succeeded" });
  ran.length = 0;

  await ui.go("/workflows");
  await page.waitForSelector(`${runRow(workflowRunId)} a.id`, { timeout: UI_WAIT });
  await page.click(`${runRow(workflowRunId)} a.id`);
  await ui.waitForPath(runPath(workflowRunId));
  await ui.clickButton('.wf-group.parallel [data-step="right"]', "Rerun from here");
  await ui.waitForText(".rerun-dialog", "Rerun from right");
  expect(await ui.textOf(".rerun-dialog")).toContain("keeps the step before it");
  await ui.fill(".rerun-dialog", "base", "{not json");
  await ui.clickButton(".rerun-dialog", "Rerun");
  await ui.waitForText(".rerun-dialog [role=alert]", "The result of base is not JSON");
  await ui.fill(".rerun-dialog", "base", "5");
  await ui.clickButton(".rerun-dialog", "Rerun");
  await page.waitForFunction((source) => (globalThis as any).location.pathname !== source, { timeout: UI_WAIT }, runPath(workflowRunId));
  await w.flush();
  await ui.waitForText("[data-testid=run-result]", "15");
  expect([...ran].sort()).toEqual(["left", "right"]);
  expect(watched.errors).toEqual([]);
  expect(watched.foreignRequests).toEqual([]);
}, TEST_TIMEOUT);
