/**
 * The console's Workflows page in a real Chromium, against runs of the official workflow SDK
 * (`@upstash/workflow`) served by a local app on svcd in the hosted dialect.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { HTTPRequest, Page } from "puppeteer-core";
import { launchBrowser, openConsole, UI_WAIT, watchPage, type ConsoleDriver } from "../helpers/browser.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let watched: ReturnType<typeof watchPage>;
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

beforeEach(async () => {
  await w.svc.api("/__svc/reset", { method: "POST" });
});

const runRow = (runId: string) => `tr:has(a[href="/console/workflows/runs/${runId}"])`;
/** Opens a run from the list (it shows the run within a poll). */
const openRun = async (runId: string) => {
  await page.waitForSelector(`${runRow(runId)} a.id`, { timeout: UI_WAIT });
  await page.click(`${runRow(runId)} a.id`);
  await ui.waitForPath(`/console/workflows/runs/${runId}`);
};
const stateOf = async (runId: string) => (await w.run(runId))?.workflowState;

describe("the console's Workflows page", () => {
  test("a run of the workflow SDK shows in the list and opens with its steps, parallel branches and result", async () => {
    const url = w.serve<{ n: number }>("/wf/order", async (context) => {
      const a = await context.run("add-one", () => context.requestPayload.n + 1);
      const [x, y] = await Promise.all([context.run("double", () => a * 2), context.run("triple", () => a * 3)]);
      return await context.run("sum", () => ({ total: x + y }));
    });
    const { workflowRunId } = await w.client.trigger({ url, body: { n: 4 }, label: "orders" });
    await w.flush();

    await ui.go("/workflows");
    await ui.waitForText(runRow(workflowRunId), "RUN_SUCCESS");
    expect(await ui.textOf(runRow(workflowRunId))).toContain(url);
    expect(await ui.textOf(runRow(workflowRunId))).toContain("orders");

    // The state filter keeps it out of the failed runs, in the list and in the address.
    await page.select("form.filters select", "RUN_FAILED");
    await ui.waitForText("main", "No run matches.");
    expect(page.url()).toContain("state=RUN_FAILED");
    await ui.clickButton("form.filters", "Clear 1");
    await page.waitForSelector(runRow(workflowRunId), { timeout: UI_WAIT });

    await openRun(workflowRunId);
    await ui.waitForText("[data-testid=run-result]", '"total": 25');
    const groups = await page.$$eval(".wf-steps > li", (els) =>
      els.map((li) => ({ parallel: (li as any).classList.contains("parallel"), steps: Array.from((li as any).querySelectorAll("[data-step]")).map((s) => (s as any).dataset.step) })),
    );
    expect(groups[0]).toEqual({ parallel: false, steps: ["init"] });
    expect(groups[1]).toEqual({ parallel: false, steps: ["add-one"] });
    expect(groups[2]!.parallel).toBe(true);
    expect([...groups[2]!.steps].sort()).toEqual(["double", "triple"]);
    expect(groups[3]).toEqual({ parallel: false, steps: ["sum"] });
    expect(await ui.textOf('[data-step="add-one"]')).toContain("STEP_SUCCESS");
    expect(await ui.textOf('[data-step="triple"]')).toContain("15");
    expect(await ui.textOf("main")).toContain('"n": 4');
    await ui.shoot("console-workflow-run.png");
  }, TEST_TIMEOUT);

  test("a waiting run is canceled from the list", async () => {
    const url = w.serve("/wf/waits", async (context) => {
      await context.run("before", () => "ready");
      await context.waitForEvent("approval", "approved", { timeout: "1h" });
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(await stateOf(workflowRunId)).toBe("RUN_STARTED");

    await ui.go("/workflows");
    await ui.waitForText(runRow(workflowRunId), "RUN_STARTED");
    await ui.clickButton(runRow(workflowRunId), "Cancel");
    await waitUntil(async () => (await stateOf(workflowRunId)) === "RUN_CANCELED", { what: "the run canceled" });
    await ui.waitForText(runRow(workflowRunId), "RUN_CANCELED");
  }, TEST_TIMEOUT);

  test("a failed run shows its failed step and error; from the workflow DLQ it is resumed, its failure function called again, its entry deleted", async () => {
    let broken = true;
    let cleanupBroken = true;
    let failureCalls = 0;
    const url = w.serve<{ id: number }>(
      "/wf/fragile",
      async (context) => {
        await context.run("fetch", () => "data");
        return await context.run("store", () => {
          if (broken) throw new Error("disk full");
          return "stored";
        });
      },
      {
        failureFunction: ({ context }) => {
          failureCalls++;
          // The first run's failure function fails too: only such a one can be called again.
          if (context.requestPayload.id === 1 && cleanupBroken) throw new Error("cleanup failed");
        },
      },
    );
    const { workflowRunId } = await w.client.trigger({ url, body: { id: 1 }, retries: 0 });
    const other = await w.client.trigger({ url, body: { id: 2 }, retries: 0 });
    await w.flush();
    // Under load the failure functions may still be on their way when flush answers.
    await waitUntil(async () => failureCalls === 2 && (await stateOf(workflowRunId)) === "RUN_FAILED", { what: "both runs failed, their failure functions called" });

    // The run's page shows the failed delivery with the endpoint's answer.
    await ui.go("/workflows");
    await openRun(workflowRunId);
    await ui.waitForText(".wf-group.next", "STEP_FAILED");
    // The step that failed is named (from the SDK's failing answer), with the error it threw.
    expect(await ui.textOf('.wf-group.next [data-step="store"]')).toContain("disk full");
    expect(await ui.textOf("main")).toContain("CALLBACK_FAIL");

    // The workflow DLQ: call the failure function of one run again, delete the other's entry.
    await ui.go("/workflows");
    await page.click('nav.tabs a[href="/console/workflows/dlq"]');
    const entries = async () => ((await (await w.svc.api("/v2/dlq?source=workflow")).json()) as { messages: Array<{ dlqId: string; workflowRunId: string }> }).messages;
    const entryOf = async (runId: string) => (await entries()).find((e) => e.workflowRunId === runId)!;
    const mine = await entryOf(workflowRunId);
    const theirs = await entryOf(other.workflowRunId);
    await page.waitForSelector(`tr[data-dlq="${theirs.dlqId}"]`, { timeout: UI_WAIT });
    // Filtered to failure functions that failed, only mine is left.
    await page.select("form.filters select", "CALLBACK_FAIL");
    // The list reloads for the filter: while it loads there is no table at all, which shows no
    // run either; the filtered table is the one that shows mine.
    await ui.waitForNoText("main table", other.workflowRunId);
    await ui.waitForText("main table", workflowRunId);
    expect(await ui.textOf("main table")).not.toContain(other.workflowRunId);
    await ui.clickButton("form.filters", "Clear 1");
    await page.waitForSelector(`tr[data-dlq="${theirs.dlqId}"]`, { timeout: UI_WAIT });
    // Their failure function succeeded: it offers no retry.
    expect(await ui.textOf(`tr[data-dlq="${theirs.dlqId}"]`)).not.toContain("Call again");
    cleanupBroken = false;
    await ui.clickButton(`tr[data-dlq="${mine.dlqId}"]`, "Call again");
    await waitUntil(async () => failureCalls === 3, { what: "the failure function called again" });
    await ui.clickButton(`tr[data-dlq="${theirs.dlqId}"]`, "Delete");
    await page.waitForFunction((id) => !(globalThis as any).document.querySelector(`tr[data-dlq="${id}"]`), { timeout: UI_WAIT }, theirs.dlqId);
    expect((await entries()).map((e) => e.dlqId)).toEqual([mine.dlqId]);

    // Resume: a new run keeps the step that succeeded and runs the failed one again; the console opens it.
    broken = false;
    await ui.clickButton(`tr[data-dlq="${mine.dlqId}"]`, "Resume");
    await page.waitForFunction((old) => /^\/console\/workflows\/runs\/wfr_/.test((globalThis as any).location.pathname) && !(globalThis as any).location.pathname.endsWith(old), { timeout: UI_WAIT }, workflowRunId);
    await w.flush();
    await ui.waitForText("[data-testid=run-result]", "stored");
    await ui.waitForText(".page-head", "RUN_SUCCESS");
    expect(await entries()).toEqual([]);
  }, TEST_TIMEOUT);

  test("from the workflow DLQ, restart all matching restarts every failed run the filter matches, over several pages, and no other", async () => {
    const failing = (path: string) =>
      w.serve(path, async (context) => {
        await context.run("work", () => {
          throw new Error("still broken");
        });
      });
    const a = failing("/wf/bulk-a");
    const b = failing("/wf/bulk-b");
    const matching = [(await w.client.trigger({ url: a, retries: 0 })).workflowRunId, (await w.client.trigger({ url: a, retries: 0 })).workflowRunId];
    const other = (await w.client.trigger({ url: b, retries: 0 })).workflowRunId;
    const original = [...matching, other];
    await w.flush();
    type Entry = { dlqId: string; workflowRunId: string };
    const entries = async () => ((await (await w.svc.api("/v2/dlq?source=workflow")).json()) as { messages: Entry[] }).messages;
    await waitUntil(async () => (await entries()).length === 3, { what: "the three runs failed into the DLQ" });
    const before = await entries();
    const runsOf = async (url: string) => ((await (await w.svc.api(`/v2/workflows/logs?workflowUrl=${encodeURIComponent(url)}`)).json()) as { runs: Array<{ workflowRunId: string }> }).runs;

    // The server bounds each bulk call (to 100 entries); here to one, so the page must follow the
    // cursor. The second call waits until the run restarted by the first has failed again: that
    // new entry matches the filter too, and must not be restarted once more.
    const calls: string[] = [];
    const problems: unknown[] = [];
    const oneAtATime = async (request: HTTPRequest) => {
      if (request.isInterceptResolutionHandled()) return;
      if (!request.url().includes("/v2/workflows/dlq/restart")) return void request.continue();
      calls.push(request.postData() ?? "");
      if (calls.length === 2)
        await waitUntil(async () => (await entries()).some((e) => !original.includes(e.workflowRunId)), { what: "the first restarted run failed again" }).catch((e) => problems.push(e));
      await request.continue({ url: `${request.url()}?count=1` });
    };
    await page.setRequestInterception(true);
    page.on("request", oneAtATime);
    try {
      await ui.go("/workflows");
      await page.click('nav.tabs a[href="/console/workflows/dlq"]');
      await page.waitForSelector(`tr[data-dlq]`, { timeout: UI_WAIT });
      await ui.fill("form.filters", "URL", a);
      await ui.clickButton("form.filters", "Filter");
      await ui.waitForNoText("main table", other);
      await ui.waitForText("main table", matching[0]!);
      await ui.clickButton(".page-head", "Restart all matching");
      await ui.waitForText(".toasts", "Restarted");
    } finally {
      page.off("request", oneAtATime);
      await page.setRequestInterception(false);
    }
    expect(problems).toEqual([]);
    expect(await ui.textOf(".toasts")).toContain("Restarted 2 runs");
    expect(calls.length).toBe(2);
    await w.flush();

    // Exactly the two matching runs were restarted (each once); the other run's entry is untouched.
    const runsA = (await runsOf(a)).map((r) => r.workflowRunId);
    expect(runsA).toHaveLength(4);
    expect(runsA).toEqual(expect.arrayContaining(matching));
    expect((await runsOf(b)).map((r) => r.workflowRunId)).toEqual([other]);
    const after = await entries();
    expect(after.filter((e) => original.includes(e.workflowRunId))).toEqual(before.filter((e) => e.workflowRunId === other));
    // The restarted runs failed again: their new entries are the ones left of URL a.
    expect(after.filter((e) => !original.includes(e.workflowRunId)).map((e) => e.workflowRunId).sort()).toEqual(runsA.filter((id) => !matching.includes(id)).sort());
  }, TEST_TIMEOUT);

  test("in the hosted dialect the Publish page names options with the Upstash- prefix", async () => {
    await ui.go("/publish");
    await ui.fill("main", "Retries", "2");
    await ui.waitForText("pre.code", "Upstash-Retries: 2");
    expect(await ui.textOf("pre.code")).toContain("$QSTASH_URL/v2/publish/");
  }, TEST_TIMEOUT);

  test("the console made no request outside svcd and logged no JavaScript error", () => {
    expect(watched.foreignRequests).toEqual([]);
    expect(watched.errors).toEqual([]);
  });
});
