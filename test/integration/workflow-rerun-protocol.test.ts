/**
 * A rerun on the wire, in svcd's own dialect (`Svc-` headers): what the new run's first delivery
 * carries (the kept part of the source run's list, its last entry as a new message, the new run's
 * headers), its settings from the `Svc-` override headers, and whose runs a rerun may read. The
 * endpoint here is a recording receiver that answers as the workflow SDK does.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { account, jsonBody } from "../helpers/accounts.ts";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const ALICE = account("alice", { readOnlyToken: "alice_reader" });
const BOB = account("bob");
let s: TestServer;
let rx: Receiver;
const answerLikeTheSdk = () => new Response("{}", { headers: { "Svc-Workflow-Sdk-Version": "1" } });

beforeAll(async () => {
  s = await startTestServer({ configFile: { accounts: [ALICE, BOB] } });
  rx = await startReceiver(answerLikeTheSdk);
});
afterAll(async () => {
  rx?.stop();
  await s?.stop();
});
beforeEach(async () => {
  expect((await s.api("/__svc/reset", { method: "POST", token: ALICE.token })).status).toBe(200);
  rx.received.length = 0;
  rx.setHandler(answerLikeTheSdk);
});

const decode = (b64: string) => Buffer.from(b64, "base64").toString();
const batch = (elements: unknown[]) => s.api("/v2/batch", { ...jsonBody("POST", elements), token: ALICE.token });
const runHeaders = (runId: string, url: string, init: boolean) => ({
  "Svc-Workflow-Init": String(init),
  "Svc-Workflow-RunId": runId,
  "Svc-Workflow-Url": url,
  "Svc-Forward-Svc-Workflow-Sdk-Version": "1",
});
/** What the SDK publishes: the trigger, then each step's result. */
const trigger = (runId: string, url: string) => ({ destination: url, body: "payload", headers: { ...runHeaders(runId, url, true), "Svc-Label": "first" } });
const step = (runId: string, url: string, stepId: number, out: unknown) => ({
  destination: url,
  body: JSON.stringify({ stepId, stepName: `step-${stepId}`, stepType: "Run", out: JSON.stringify(out), concurrent: 1 }),
  headers: { ...runHeaders(runId, url, false), "Content-Type": "application/json" },
});
const rerun = (runId: string, body: string, token: string, headers: Record<string, string> = {}) =>
  s.api(`/v2/workflows/runs/${runId}/rerun`, { method: "POST", body, token, headers });

test("the new run's first delivery carries the kept list, its last entry as a new message, under the new run's headers", async () => {
  const url = `${rx.url}/wf`;
  const [{ messageId: init }] = await (await batch([trigger("wfr_src", url)])).json();
  const [{ messageId: one }] = await (await batch([step("wfr_src", url, 1, "a")])).json();
  await batch([step("wfr_src", url, 2, "b")]);
  await batch([step("wfr_src", url, 3, "c")]);
  await flush(s.api);
  rx.received.length = 0;

  // As curl -d sends it: no JSON content type.
  const res = await rerun("wfr_src", '{"fromStep":"step-2","results":{"step-1":"edited"}}', ALICE.token, { "Svc-Label": "again", "Svc-Retries": "0" });
  expect(res.status).toBe(200);
  const { workflowRunId, workflowCreatedAt } = await res.json();
  expect(workflowRunId).toMatch(/^wfr_/);
  await flush(s.api);
  expect(rx.received).toHaveLength(1);
  const [delivery] = rx.received;
  expect(delivery!.headers.get("svc-workflow-runid")).toBe(workflowRunId);
  expect(delivery!.headers.get("svc-workflow-createdat")).toBe(String(workflowCreatedAt));
  expect(delivery!.headers.get("svc-workflow-sdk-version")).toBe("1");
  const list = JSON.parse(delivery!.text) as Array<{ messageId: string; body: string; callType: string }>;
  expect(list.map((e) => e.callType)).toEqual(["step", "step"]);
  expect(list[0]!.messageId).toBe(init);
  // Step 1 is delivered again, as a new message (the one delivered), with its new result.
  expect(list[1]!.messageId).not.toBe(one);
  expect(list[1]!.messageId).toBe(delivery!.headers.get("svc-message-id")!);
  expect(decode(list[0]!.body)).toBe("payload");
  expect(JSON.parse(decode(list[1]!.body))).toMatchObject({ stepId: 1, stepName: "step-1", out: '"edited"' });

  const logs = await (await s.api(`/v2/workflows/logs?workflowRunId=${workflowRunId}`, { token: ALICE.token })).json();
  expect(logs.runs[0]).toMatchObject({ workflowState: "RUN_STARTED", label: "again", rerunOf: { workflowRunId: "wfr_src", stepName: "step-2", stepId: 2 } });
  const message = await (await s.api(`/v2/logs?messageId=${list[1]!.messageId}&state=CREATED`, { token: ALICE.token })).json();
  expect(message.events[0]).toMatchObject({ maxRetries: 0, label: "again" });
});

test("a run started by POST /v2/trigger that its endpoint never took over is taken over by its rerun's, once the endpoint is fixed", async () => {
  const url = `${rx.url}/wf`;
  const sdk = { "Svc-Workflow-Sdk-Version": "1" };
  // Started for a caller without the SDK (the endpoint's SDK is to take it over), and an SDK before
  // 1.0 answers without triggering the run itself: the run fails at once.
  const started = await s.api(`/v2/trigger/${url}`, {
    method: "POST",
    body: "from curl",
    token: ALICE.token,
    headers: { "Svc-Workflow-Unknown-Sdk": "true" },
  });
  const { workflowRunId } = await started.json();
  await flush(s.api);
  const failed = await (await s.api(`/v2/workflows/logs?workflowRunId=${workflowRunId}`, { token: ALICE.token })).json();
  expect(failed.runs[0].workflowState).toBe("RUN_FAILED");

  // The endpoint now runs an SDK of 1.0 or later (it names itself) that takes the run over, as it
  // does any run started for it.
  const retriggers: Array<{ messageId: string; url: string; deduplicated?: boolean }> = [];
  rx.setHandler(async (req) => {
    const runId = req.headers.get("svc-workflow-runid")!;
    if (req.headers.get("svc-workflow-unknown-sdk") === "true") {
      const again = { ...trigger(runId, url), body: "from curl" };
      Object.assign(again.headers, { "Svc-Workflow-Trigger-By-Sdk": "true" });
      retriggers.push(...(await (await batch([again])).json()));
    }
    return new Response("{}", { headers: { ...sdk, "Svc-Workflow-Sdk": "@upstash/workflow@v1.3.3" } });
  });
  const rerunId = (await (await rerun(workflowRunId, '{"fromStep":"init"}', ALICE.token)).json()).workflowRunId;
  await flush(s.api);
  expect(retriggers).toEqual([{ messageId: expect.any(String), url }]);
  const logs = await (await s.api(`/v2/workflows/logs?workflowRunId=${rerunId}`, { token: ALICE.token })).json();
  expect(logs.runs[0]).toMatchObject({ workflowState: "RUN_STARTED", rerunOf: { workflowRunId, stepName: "init" } });
});

test("another account's run is not found; a read-only token may not rerun", async () => {
  const url = `${rx.url}/wf`;
  await batch([trigger("wfr_mine", url)]);
  await batch([step("wfr_mine", url, 1, "a")]);
  const fromBob = await rerun("wfr_mine", '{"fromStep":1}', BOB.token);
  expect({ status: fromBob.status, body: await fromBob.json() }).toEqual({ status: 404, body: { error: "workflow run wfr_mine not found" } });
  const fromReader = await rerun("wfr_mine", '{"fromStep":1}', "alice_reader");
  expect(fromReader.status).toBe(403);
  const runs = (await (await s.api("/v2/workflows/logs", { token: ALICE.token })).json()).runs;
  expect(runs.map((r: { workflowRunId: string }) => r.workflowRunId)).toEqual(["wfr_mine"]);
});
