/**
 * The workflow routes' real answers fit what the OpenAPI document says of them: runs made with the
 * workflow protocol on the wire (as workflow-protocol.test.ts does), one running with a finished
 * step and a wait, others failed into the DLQ, then every workflow route asked once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { WorkflowDlqPageJson, WorkflowLogsJson } from "../../src/workflows/api-schemas.ts";
import { jsonBody } from "../helpers/accounts.ts";
import { flush } from "../helpers/control.ts";
import { answerFits } from "../helpers/json-schema.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let rx: Receiver;
let doc: any;
beforeAll(async () => {
  s = await startTestServer();
  // Answers as the workflow SDK does, except on /plain (an endpoint without the SDK fails its run)
  // and /failure (a failure function that fails).
  rx = await startReceiver((req) =>
    req.path.startsWith("/failure")
      ? new Response("down", { status: 500 })
      : new Response("{}", { headers: req.path.startsWith("/plain") ? {} : { "Svc-Workflow-Sdk-Version": "1" } }),
  );
  doc = await (await fetch(`${s.url}/openapi.json`)).json();
});
afterAll(async () => {
  rx?.stop();
  await s?.stop();
});

const fits = (path: string, method: string, res: Response) => answerFits(doc, path, method, res);
const batch = (elements: unknown[]) => s.api("/v2/batch", jsonBody("POST", elements));
const runHeaders = (runId: string, url: string, init: boolean) => ({
  "Svc-Workflow-Init": String(init),
  "Svc-Workflow-RunId": runId,
  "Svc-Workflow-Url": url,
  "Svc-Forward-Svc-Workflow-Sdk-Version": "1",
});
const trigger = (runId: string, url: string) => ({ destination: url, body: "hello", headers: { ...runHeaders(runId, url, true), "Svc-Label": "docs" } });
const step = (runId: string, url: string) => ({
  destination: url,
  body: JSON.stringify({ stepId: 1, stepName: "first", stepType: "Run", out: '"one"', concurrent: 1 }),
  headers: { ...runHeaders(runId, url, false), "Content-Type": "application/json" },
});

/** Every failed run's DLQ entry, as the workflow DLQ lists it. */
async function failedRunEntries(): Promise<Array<{ dlqId: string; workflowRunId: string }>> {
  await flush(s.api);
  const res = await s.api("/v2/workflows/dlq");
  const page = await fits("/v2/workflows/dlq", "get", res);
  expect(Value.Errors(WorkflowDlqPageJson, page).First()).toBeUndefined();
  return page.messages;
}

test("the workflow routes' real answers fit the schemas the document gives them", async () => {
  const url = `${rx.url}/wf`;
  expect((await batch([trigger("wfr_doc", url)])).status).toBe(200);
  await flush(s.api);
  expect((await batch([step("wfr_doc", url)])).status).toBe(200);
  const waitStep = { stepId: 2, stepName: "wait", stepType: "Wait", concurrent: 1 };
  const wait = s.api("/v2/wait/evt_doc", { ...jsonBody("POST", { url, timeout: "1h", step: waitStep }), headers: { ...runHeaders("wfr_doc", url, false), "content-type": "application/json" } });
  await fits("/v2/wait/{eventId}", "post", await wait);
  await flush(s.api);

  // The run under way: its finished step and its wait show in its log; its raw list is there.
  const logs = await fits("/v2/workflows/logs", "get", await s.api("/v2/workflows/logs?workflowRunId=wfr_doc"));
  expect(Value.Errors(WorkflowLogsJson, logs).First()).toBeUndefined();
  const groups = logs.runs[0].steps.map((g: { steps: Array<{ stepName?: string }> }) => g.steps.map((e) => e.stepName));
  expect(groups).toEqual([["init"], ["first"], ["wait"]]);
  await fits("/v2/workflows/events", "get", await s.api("/v2/workflows/events?groupBy=workflowRunId&count=1"));
  const raw = await fits("/v2/workflows/runs/{runId}", "get", await s.api("/v2/workflows/runs/wfr_doc"));
  expect(raw).toHaveLength(2);
  const [waiter] = await fits("/v2/waiters/{eventId}", "get", await s.api("/v2/waiters/evt_doc"));
  expect(waiter.url).toBe(url);
  const [notified] = await fits("/v2/notify/{id}", "post", await s.api("/v2/notify/evt_doc", { method: "POST", body: "data" }));
  expect(notified.workflowRunId).toBe("wfr_doc");
  await fits("/v2/notify/{id}/{eventId}", "post", await s.api("/v2/notify/wfr_doc/evt_later", { method: "POST", body: "kept" }));
  const hook = `/v2/workflows/hooks/${s.config.defaultAccount.userId}/wfr_doc/evt_hook`;
  await fits("/v2/workflows/hooks/{userId}/{runId}/{eventId}", "post", await fetch(`${s.url}${hook}`, { method: "POST", body: "x" }));
  await fits("/v2/workflows/runs/{runId}", "delete", await s.api("/v2/workflows/runs/wfr_doc?cancel=false", { method: "DELETE", body: '"done"' }));
  const ended = (await (await s.api("/v2/workflows/logs?workflowRunId=wfr_doc")).json()).runs[0];
  expect({ state: ended.workflowState, response: ended.workflowRunResponse }).toEqual({ state: "RUN_SUCCESS", response: '"done"' });
  // A rerun of it from its first step: a new run, whose log names its source.
  const rerun = await fits("/v2/workflows/runs/{runId}/rerun", "post", await s.api("/v2/workflows/runs/wfr_doc/rerun", jsonBody("POST", { fromStep: "first" })));
  const rerunLog = await fits("/v2/workflows/logs", "get", await s.api(`/v2/workflows/logs?workflowRunId=${rerun.workflowRunId}`));
  expect(Value.Errors(WorkflowLogsJson, rerunLog).First()).toBeUndefined();
  expect(rerunLog.runs[0].rerunOf).toEqual({ workflowRunId: "wfr_doc", workflowRunCreatedAt: ended.workflowRunCreatedAt, stepName: "first", stepId: 1 });

  // Runs without the SDK, and cancelled runs.
  // Delayed: the receiver does not take these runs over (they would fail at their first delivery), so they still run.
  const later = { "Svc-Delay": "1h" };
  const started = await fits("/v2/trigger/{rest}", "post", await s.api(`/v2/trigger/${url}`, { method: "POST", body: "from curl", headers: later }));
  await fits("/v2/batch/trigger", "post", await s.api("/v2/batch/trigger", jsonBody("POST", [{ destination: url, headers: later }])));
  const cancelled = await fits("/v2/workflows/runs", "delete", await s.api(`/v2/workflows/runs?workflowRunIds=${started.workflowRunId}`, { method: "DELETE" }));
  expect(cancelled).toEqual({ cancelled: 1 });

  // Failed runs: their endpoint runs no SDK. The DLQ lists, resumes, restarts and deletes them.
  const plain = `${rx.url}/plain`;
  await batch(["wfr_fail_1", "wfr_fail_2", "wfr_fail_3"].map((id) => trigger(id, plain)));
  const failed = await failedRunEntries();
  expect(failed.map((e) => e.workflowRunId).sort()).toEqual(["wfr_fail_1", "wfr_fail_2", "wfr_fail_3"]);
  const [one, two, three] = failed;
  await fits("/v2/workflows/dlq/{dlqId}", "get", await s.api(`/v2/workflows/dlq/${one!.dlqId}`));
  await fits("/v2/workflows/dlq/resume/{dlqId}", "post", await s.api(`/v2/workflows/dlq/resume/${one!.dlqId}`, { method: "POST" }));
  await fits("/v2/workflows/dlq/restart/{dlqId}", "post", await s.api(`/v2/workflows/dlq/restart/${two!.dlqId}`, { method: "POST" }));
  await fits("/v2/workflows/dlq/{dlqId}", "delete", await s.api(`/v2/workflows/dlq/${three!.dlqId}`, { method: "DELETE" }));
  // The resumed and restarted runs fail again: two new entries.
  const again = await failedRunEntries();
  expect(again).toHaveLength(2);
  const resumed = await fits("/v2/workflows/dlq/resume", "post", await s.api(`/v2/workflows/dlq/resume?dlqIds=${again[0]!.dlqId}`, { method: "POST" }));
  expect(resumed.workflowRuns).toHaveLength(1);
  await fits("/v2/workflows/dlq/restart", "post", await s.api(`/v2/workflows/dlq/restart?dlqIds=${again[1]!.dlqId}`, { method: "POST" }));
  expect(await failedRunEntries()).toHaveLength(2);
  // A failed run whose failure function failed too: it is called again.
  await batch([{ ...trigger("wfr_fail_4", plain), headers: { ...trigger("wfr_fail_4", plain).headers, "Svc-Failure-Callback": `${rx.url}/failure`, "Svc-Failure-Callback-Retries": "0" } }]);
  const withFailure = (await failedRunEntries()).find((e) => e.workflowRunId === "wfr_fail_4")!;
  const called = await fits("/v2/workflows/dlq/callback/{dlqId}", "post", await s.api(`/v2/workflows/dlq/callback/${withFailure.dlqId}`, { method: "POST" }));
  expect(called.workflowRunId).toBe("wfr_fail_4");
  const deleted = await fits("/v2/workflows/dlq", "delete", await s.api("/v2/workflows/dlq?count=1", { method: "DELETE" }));
  expect(deleted).toEqual({ deleted: 1, cursor: expect.any(String) });
  expect(await failedRunEntries()).toHaveLength(2);

  // Every run's log: finished, cancelled, failed (with its errors and failure function), resumed.
  const all = await fits("/v2/workflows/logs", "get", await s.api("/v2/workflows/logs"));
  expect(Value.Errors(WorkflowLogsJson, all).First()).toBeUndefined();
  const states = all.runs.map((r: { workflowState: string }) => r.workflowState);
  expect(states).toEqual(expect.arrayContaining(["RUN_SUCCESS", "RUN_CANCELED", "RUN_FAILED", "RUN_STARTED"]));
  const withFunction = all.runs.find((r: { workflowRunId: string }) => r.workflowRunId === "wfr_fail_4");
  expect(withFunction.failureFunction.url).toBe(`${rx.url}/failure`);
});

/** The document's parameter of an operation, by where it is read and its name. */
const parameter = (path: string, method: string, where: string, name: string) =>
  (doc.paths[path][method].parameters ?? []).find((p: { in: string; name: string }) => p.in === where && p.name === name);

test("the document describes what the workflow routes read beside their filters", () => {
  expect(parameter("/v2/workflows/runs/{runId}", "delete", "query", "cancel").description).toContain("absent: the run is cancelled");
  for (const path of ["/v2/workflows/logs", "/v2/workflows/events"]) {
    expect(parameter(path, "get", "query", "workflowRuns").description).toContain("runId@workflowCreatedAt");
    expect(parameter(path, "get", "query", "trimBody").schema).toEqual({ type: "integer", minimum: 0 });
    expect(parameter(path, "get", "query", "state").description).toContain("STEP_RETRY");
  }
  expect(doc.paths["/v2/workflows/dlq/callback/{dlqId}"].delete.summary).toContain("Cancel");
  const overrides = ["Retries", "Delay", "Retry-Delay", "Flow-Control-Key", "Flow-Control-Value", "Label", "Failure-Callback"];
  for (const path of ["/v2/workflows/dlq/resume", "/v2/workflows/dlq/restart", "/v2/workflows/dlq/resume/{dlqId}", "/v2/workflows/dlq/restart/{dlqId}"])
    for (const suffix of overrides) expect(parameter(path, "post", "header", `Svc-${suffix}`)?.description).toContain("default: the failed run's");
  for (const suffix of overrides)
    expect(parameter("/v2/workflows/runs/{runId}/rerun", "post", "header", `Svc-${suffix}`)?.description).toContain("default: the source run's");
  const rerunBody = doc.paths["/v2/workflows/runs/{runId}/rerun"].post.requestBody.content["application/json"].schema;
  expect(Object.keys(rerunBody.properties)).toEqual(["fromStep", "results"]);
});
