/**
 * The console shows a traced message's trace id and a traced workflow run's, in a real Chromium,
 * against svcd exporting to a real OTLP/HTTP collector on loopback (the hosted dialect, with the
 * official workflow SDK's runs).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { tracingFromEnv } from "../../src/config/tracing.ts";
import { launchBrowser, openConsole, UI_WAIT, type ConsoleDriver } from "../helpers/browser.ts";
import { startOtlpReceiver, traceparentParts, type OtlpReceiver } from "../helpers/otlp-receiver.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;
let otlp: OtlpReceiver;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let ui: ConsoleDriver;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  const tracing = tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "10" });
  [w, browser] = await Promise.all([startWorkflowWorld({ config: { tracing } }), launchBrowser()]);
  ({ page, ui } = await openConsole(browser.browser, w.svc.url, w.svc.token));
});

afterAll(async () => {
  await browser?.close();
  await w?.stop();
  otlp?.stop();
});

test("a message's page and a run's page show the trace to look them up by", async () => {
  const seen: string[] = [];
  const target = w.route("/traced-target", (request) => {
    seen.push(request.headers.get("traceparent") ?? "");
    return new Response("ok");
  });
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const res = await w.svc.api(`/v2/publish/${target}`, {
    method: "POST",
    body: "hi",
    headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  });
  const { messageId } = (await res.json()) as { messageId: string };
  await w.flush();
  expect(traceparentParts(seen[0]!).traceId).toBe(traceId);

  // Opened from the log, as a user does.
  await ui.go("/messages");
  await page.waitForSelector(`td a[href="/console/messages/${messageId}"]`, { timeout: UI_WAIT });
  await page.click(`td a[href="/console/messages/${messageId}"]`);
  await ui.waitForPath(`/console/messages/${messageId}`);
  await ui.waitForText("main", "DELIVERED");
  await ui.waitForText("main", traceId);

  const url = w.serve("/wf/traced", async (context) => {
    await context.run("only", () => 1);
  });
  const { workflowRunId } = await w.client.trigger({ url, body: {} });
  await w.flush();
  const logs = (await (await w.svc.api(`/v2/workflows/logs?workflowRunId=${workflowRunId}`)).json()) as { runs: Array<{ traceId: string }> };
  const runTrace = logs.runs[0]!.traceId;
  expect(runTrace).toMatch(/^[0-9a-f]{32}$/);
  await ui.go("/workflows");
  const link = `a[href="/console/workflows/runs/${workflowRunId}"]`;
  await page.waitForSelector(link, { timeout: UI_WAIT });
  await page.click(link);
  await ui.waitForPath(`/console/workflows/runs/${workflowRunId}`);
  await ui.waitForText("main", "RUN_SUCCESS");
  await ui.waitForText("main", runTrace);
  expect(await page.$$eval("dl.fields dt", (dts) => dts.map((dt) => dt.textContent))).toContain("Trace");
}, 30_000);
