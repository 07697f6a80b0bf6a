/**
 * The workflow protocol on the wire, in svcd's own dialect (`Svc-` headers): what a run's
 * deliveries carry, what its publishes are answered, and the server's own checks. The endpoint
 * here is a recording receiver that answers as the workflow SDK does.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { account, jsonBody } from "../helpers/accounts.ts";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver, type ReceivedRequest } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const ALICE = account("alice");
const BOB = account("bob");
let s: TestServer;
let rx: Receiver;

// Answers like the SDK: every answer carries the protocol version and the SDK's, except on /plain.
const answerLikeTheSdk = (req: ReceivedRequest) =>
  new Response("{}", { headers: req.path.startsWith("/plain") ? {} : { "Svc-Workflow-Sdk-Version": "1", "Svc-Workflow-Sdk": "v1.3.3" } });

beforeAll(async () => {
  s = await startTestServer({ configFile: { accounts: [ALICE, BOB] } });
  rx = await startReceiver(answerLikeTheSdk);
});
afterAll(async () => {
  rx?.stop();
  await s?.stop();
});
beforeEach(async () => {
  for (const who of [ALICE, BOB]) expect((await s.api("/__svc/reset", { method: "POST", token: who.token })).status).toBe(200);
  rx.received.length = 0;
  rx.setHandler(answerLikeTheSdk);
});

const decode = (b64: string) => Buffer.from(b64, "base64").toString();
const runLog = async (runId: string) => (await (await s.api(`/v2/workflows/logs?workflowRunId=${runId}`, { token: ALICE.token })).json()).runs[0];
const batch = (elements: unknown[], token = ALICE.token) => s.api("/v2/batch", { ...jsonBody("POST", elements), token });

/** What the SDK sends to start a run. */
function trigger(runId: string, url: string, body = "hello", extra: Record<string, string> = {}) {
  return {
    destination: url,
    body,
    headers: {
      "Svc-Workflow-Init": "true",
      "Svc-Workflow-RunId": runId,
      "Svc-Workflow-Url": url,
      "Svc-Forward-Svc-Workflow-Sdk-Version": "1",
      "Svc-Forward-X-Tenant": "acme",
      "Content-Type": "text/plain",
      ...extra,
    },
  };
}

/** What the SDK sends to hand in a step's result. */
function step(runId: string, url: string, stepId: number, out: unknown) {
  return {
    destination: url,
    body: JSON.stringify({ stepId, stepName: `step-${stepId}`, stepType: "Run", out: JSON.stringify(out), concurrent: 1 }),
    headers: {
      "Svc-Workflow-Init": "false",
      "Svc-Workflow-RunId": runId,
      "Svc-Workflow-Url": url,
      "Svc-Forward-Svc-Workflow-Sdk-Version": "1",
      "Content-Type": "application/json",
    },
  };
}

describe("workflow protocol, svc dialect", () => {
  test("a trigger's delivery names the run and carries the step list; later steps inherit the trigger's settings and headers", async () => {
    const url = `${rx.url}/wf`;
    const res = await batch([trigger("wfr_one", url, "hello", { "Svc-Retries": "0", "Svc-Label": "nightly" })]);
    expect(res.status).toBe(200);
    const [{ messageId: first }] = await res.json();
    await flush(s.api);
    const [delivery] = rx.received;
    expect(delivery!.headers.get("svc-workflow-runid")).toBe("wfr_one");
    expect(delivery!.headers.get("svc-workflow-url")).toBe(url);
    expect(Number(delivery!.headers.get("svc-workflow-createdat"))).toBeGreaterThan(0);
    expect(delivery!.headers.get("svc-workflow-sdk-version")).toBe("1");
    expect(JSON.parse(delivery!.text)).toEqual([{ messageId: first, body: Buffer.from("hello").toString("base64"), callType: "step" }]);

    const stepRes = await batch([step("wfr_one", url, 1, { n: 1 })]);
    const [{ messageId: second }] = await stepRes.json();
    await flush(s.api);
    const stepDelivery = rx.received[1]!;
    const list = JSON.parse(stepDelivery.text) as Array<{ messageId: string; body: string }>;
    expect(list.map((e) => e.messageId)).toEqual([first, second]);
    expect(JSON.parse(decode(list[1]!.body))).toMatchObject({ stepId: 1, stepName: "step-1" });
    // The trigger's own header travels with every step; its retries (0) and label too.
    expect(stepDelivery.headers.get("x-tenant")).toBe("acme");
    const message = await (await s.api(`/v2/logs?messageId=${second}&state=CREATED`, { token: ALICE.token })).json();
    expect(message.events[0]).toMatchObject({ maxRetries: 0, label: "nightly" });
  });

  test("the run's list while it runs (lazy fetch); ending it: a later step is refused with 400 for the whole batch, the list is 404", async () => {
    const url = `${rx.url}/wf`;
    await batch([trigger("wfr_end", url)]);
    await batch([step("wfr_end", url, 1, "a")]);
    const steps = await (await s.api("/v2/workflows/runs/wfr_end", { token: ALICE.token })).json();
    expect(steps.map((e: { callType: string }) => e.callType)).toEqual(["step", "step"]);
    const end = await s.api("/v2/workflows/runs/wfr_end?cancel=false", { method: "DELETE", body: '"the result"', token: ALICE.token });
    expect(end.status).toBe(200);
    const late = await batch([step("wfr_end", url, 2, "b"), step("wfr_end", url, 3, "c")]);
    expect(late.status).toBe(400);
    expect((await late.json()).error).toContain("wfr_end");
    expect((await s.api("/v2/workflows/runs/wfr_end", { token: ALICE.token })).status).toBe(404);
    expect((await s.api("/v2/workflows/runs/wfr_unknown?cancel=false", { method: "DELETE", token: ALICE.token })).status).toBe(404);
    const logs = await (await s.api("/v2/workflows/logs?workflowRunId=wfr_end", { token: ALICE.token })).json();
    expect(logs.runs[0]).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunResponse: '"the result"' });
  });

  test("a second trigger of the same run id is a duplicate: the same message id, nothing new delivered", async () => {
    const url = `${rx.url}/wf`;
    const [a] = await (await batch([trigger("wfr_dup", url)])).json();
    const [b] = await (await batch([trigger("wfr_dup", url)])).json();
    expect(b).toEqual({ messageId: a.messageId, url, deduplicated: true });
    await flush(s.api);
    expect(rx.received).toHaveLength(1);
  });

  test("a trigger answered 2XX by an endpoint that runs no workflow fails the run with the detection error", async () => {
    const url = `${rx.url}/plain`;
    await batch([trigger("wfr_plain", url, "x", { "Svc-Retries": "3" })]);
    await flush(s.api);
    // Failed at once: retrying would not turn the endpoint into a workflow.
    expect(rx.received).toHaveLength(1);
    const logs = await (await s.api("/v2/workflows/logs?workflowRunId=wfr_plain", { token: ALICE.token })).json();
    expect(logs.runs[0].workflowState).toBe("RUN_FAILED");
    const next = logs.runs[0].steps.find((g: { type: string }) => g.type === "next");
    expect(next.steps[0].errors[0].error).toBe(
      "detected a non-workflow destination for trigger/invoke. make sure you are sending the request to the correct endpoint",
    );
  });

  test("POST /v2/trigger starts a run for a caller without the SDK: the endpoint gets its start as its first step", async () => {
    const url = `${rx.url}/wf`;
    const res = await s.api(`/v2/trigger/${url}`, { method: "POST", body: "from curl", token: ALICE.token, headers: { "Svc-Forward-X-Tenant": "acme" } });
    expect(res.status).toBe(200);
    const { workflowRunId } = await res.json();
    await flush(s.api);
    expect(rx.received).toHaveLength(1);
    const [call] = rx.received;
    expect(call!.headers.get("svc-workflow-unknown-sdk")).toBeNull();
    expect(call!.headers.get("svc-workflow-sdk-version")).toBe("1");
    expect(call!.headers.get("svc-workflow-runid")).toBe(workflowRunId);
    expect(call!.headers.get("x-tenant")).toBe("acme");
    expect(JSON.parse(call!.text).map((e: { body: string }) => decode(e.body))).toEqual(["from curl"]);
    // The SDK runs its first step from there.
    expect((await batch([step(workflowRunId, url, 1, "one")])).status).toBe(200);
    await flush(s.api);
    expect(JSON.parse(rx.received[1]!.text).map((e: { body: string }) => decode(e.body))).toEqual(["from curl", expect.stringContaining('"stepId":1')]);
    expect((await runLog(workflowRunId)).workflowState).toBe("RUN_STARTED");
  });

  test("POST /v2/trigger with Svc-Workflow-Unknown-Sdk: the SDK's re-trigger with the same id is the run's start", async () => {
    const url = `${rx.url}/wf`;
    const res = await s.api(`/v2/trigger/${url}`, { method: "POST", body: "from curl", token: ALICE.token, headers: { "Svc-Workflow-Unknown-Sdk": "true" } });
    expect(res.status).toBe(200);
    const { workflowRunId, workflowCreatedAt } = await res.json();
    expect(workflowRunId).toStartWith("wfr_");
    expect(workflowCreatedAt).toBeGreaterThan(0);
    await flush(s.api);
    const [call] = rx.received;
    expect(call!.headers.get("svc-workflow-unknown-sdk")).toBe("true");
    expect(call!.headers.get("svc-workflow-runid")).toBe(workflowRunId);
    expect(JSON.parse(call!.text).map((e: { body: string }) => decode(e.body))).toEqual(["from curl"]);
    // The SDK answers by triggering the same run itself.
    const again = trigger(workflowRunId, url, "from curl", { "Svc-Workflow-Trigger-By-Sdk": "true" });
    const [started] = await (await batch([again])).json();
    expect(started.deduplicated).toBeUndefined();
    await flush(s.api);
    expect(JSON.parse(rx.received[1]!.text)).toEqual([{ messageId: started.messageId, body: Buffer.from("from curl").toString("base64"), callType: "step" }]);
  });

  test("POST /v2/trigger's settings stay the run's after the SDK's re-trigger (asked for); the delivery's own headers do not join it", async () => {
    const url = `${rx.url}/wf`;
    const settings = {
      "Svc-Retries": "0",
      "Svc-Label": "rest",
      "Svc-Flow-Control-Key": "rest-key",
      "Svc-Flow-Control-Value": "parallelism=1",
      "Svc-Failure-Callback": `${rx.url}/failure`,
      "Svc-Forward-X-Tenant": "acme",
      "Svc-Workflow-Unknown-Sdk": "true",
    };
    // Like the SDK, the endpoint triggers the run again before it answers, forwarding every header of
    // the delivery but its workflow headers.
    // The step after the start fails: with the trigger's retries (0) the run fails at once.
    rx.setHandler(async (req, index) => {
      if (index === 2) return new Response("down", { status: 500 });
      if (req.headers.get("svc-workflow-unknown-sdk") === "true") {
        const runId = req.headers.get("svc-workflow-runid")!;
        const forwarded = [...req.headers].filter(([name]) => !name.startsWith("svc-workflow-")).map(([name, value]) => [`Svc-Forward-${name}`, value]);
        const again = trigger(runId, url, "from curl", { "Svc-Workflow-Trigger-By-Sdk": "true" });
        // The tenant header comes back among the forwarded ones, in the delivery's lower case.
        delete (again.headers as Record<string, string>)["Svc-Forward-X-Tenant"];
        Object.assign(again.headers, Object.fromEntries(forwarded));
        expect((await batch([again])).status).toBe(200);
      }
      return answerLikeTheSdk(req);
    });
    const res = await s.api(`/v2/trigger/${url}`, { method: "POST", body: "from curl", token: ALICE.token, headers: settings });
    const { workflowRunId } = await res.json();
    await flush(s.api);
    expect((await batch([step(workflowRunId, url, 1, "one")])).status).toBe(200);
    await flush(s.api);
    const deliveries = rx.received.filter((r) => r.path === "/wf").slice(1);
    expect(deliveries).toHaveLength(2);
    expect(rx.received.filter((r) => r.path === "/failure")).toHaveLength(1);
    for (const d of deliveries) {
      expect(d.headers.get("x-tenant")).toBe("acme");
      for (const name of ["svc-signature", "svc-message-id", "content-length", "host"]) expect(d.headers.get(name)).not.toContain(",");
    }
    const run = await runLog(workflowRunId);
    expect(run).toMatchObject({ workflowState: "RUN_FAILED", label: "rest", flowControlKey: "rest-key", failureFunction: { url: `${rx.url}/failure` } });
    const steps = run.steps.flatMap((g: { steps: unknown[] }) => g.steps) as Array<{ retries: number; headers?: Record<string, string[]> }>;
    for (const e of steps) {
      expect(e.retries).toBe(0);
      const names = Object.keys(e.headers ?? {}).map((n) => n.toLowerCase());
      expect(names.filter((n) => ["svc-signature", "svc-message-id", "host", "content-length"].includes(n))).toEqual([]);
    }
  });

  test("a DLQ restart or resume takes override headers in the svc dialect", async () => {
    const plain = `${rx.url}/plain`;
    await batch([trigger("wfr_to_restart", plain, "x", { "Svc-Retries": "0", "Svc-Label": "before" })]);
    await flush(s.api);
    const [entry] = (await (await s.api("/v2/workflows/dlq?workflowRunId=wfr_to_restart", { token: ALICE.token })).json()).messages;
    const overrides = { "Svc-Label": "after", "Svc-Flow-Control-Key": "after-key", "Svc-Flow-Control-Value": "rate=5" };
    const res = await s.api(`/v2/workflows/dlq/restart/${entry.dlqId}`, { method: "POST", token: ALICE.token, headers: overrides });
    expect(res.status).toBe(200);
    const { workflowRunId } = await res.json();
    expect(await runLog(workflowRunId)).toMatchObject({ label: "after", flowControlKey: "after-key" });
  });

  test("POST /v2/batch/trigger starts one run per element; a run id that exists already is deduplicated", async () => {
    const url = `${rx.url}/wf`;
    const elements = [
      { destination: url, body: "first", headers: { "Svc-Workflow-RunId": "wfr_batch_1" } },
      { destination: url, body: "second" },
    ];
    const res = await s.api("/v2/batch/trigger", { ...jsonBody("POST", elements), token: ALICE.token });
    expect(res.status).toBe(201);
    const runs = await res.json();
    expect(runs).toEqual([
      { workflowRunId: "wfr_batch_1", workflowCreatedAt: expect.any(Number) },
      { workflowRunId: expect.stringMatching(/^wfr_/), workflowCreatedAt: expect.any(Number) },
    ]);
    const again = await (await s.api("/v2/batch/trigger", { ...jsonBody("POST", [elements[0]]), token: ALICE.token })).json();
    expect(again).toEqual([{ workflowRunId: "wfr_batch_1", workflowCreatedAt: runs[0].workflowCreatedAt, deduplicated: true }]);
    await flush(s.api);
    expect(rx.received.map((r) => JSON.parse(r.text).map((e: { body: string }) => decode(e.body))[0]).sort()).toEqual(["first", "second"]);
  });

  test("runs are per account: another account neither sees, appends to, ends nor cancels them; reset wipes them", async () => {
    const url = `${rx.url}/wf`;
    await batch([trigger("wfr_mine", url)]);
    expect((await batch([step("wfr_mine", url, 1, "x")], BOB.token)).status).toBe(400);
    expect((await s.api("/v2/workflows/runs/wfr_mine?cancel=true", { method: "DELETE", token: BOB.token })).status).toBe(404);
    expect(await (await s.api("/v2/workflows/runs?workflowRunIds=wfr_mine", { method: "DELETE", token: BOB.token })).json()).toEqual({ cancelled: 0 });
    expect((await (await s.api("/v2/workflows/logs", { token: BOB.token })).json()).runs).toEqual([]);
    expect((await (await s.api("/v2/workflows/logs", { token: ALICE.token })).json()).runs).toHaveLength(1);
    await s.api("/__svc/reset", { method: "POST", token: ALICE.token });
    expect((await (await s.api("/v2/workflows/logs", { token: ALICE.token })).json()).runs).toEqual([]);
    expect((await s.api("/v2/workflows/runs/wfr_mine", { token: ALICE.token })).status).toBe(404);
  });

  test("notify of one run keeps the event until that run waits for it; the wait then takes it at once", async () => {
    const url = `${rx.url}/wf`;
    await batch([trigger("wfr_wait", url)]);
    const kept = await s.api("/v2/notify/wfr_wait/evt_early", { method: "POST", body: '{"early":true}', token: ALICE.token });
    expect(await kept.json()).toEqual([]);
    await flush(s.api);
    rx.received.length = 0;
    const waitStep = { stepId: 1, stepName: "wait", stepType: "Wait", concurrent: 1 };
    const headers = { "Svc-Workflow-RunId": "wfr_wait", "Svc-Workflow-Init": "false", "Svc-Workflow-Url": url, "Svc-Forward-Svc-Workflow-Sdk-Version": "1" };
    const wait = await s.api("/v2/wait/evt_early", { ...jsonBody("POST", { url, timeout: "1h", step: waitStep }), headers: { ...headers, "content-type": "application/json" }, token: ALICE.token });
    expect(wait.status).toBe(200);
    await flush(s.api);
    const list = JSON.parse(rx.received[0]!.text) as Array<{ body: string }>;
    const event = JSON.parse(decode(list.at(-1)!.body));
    expect(event).toMatchObject({ stepName: "wait", stepType: "Wait", waitEventId: "evt_early", waitTimeout: false });
    expect(JSON.parse(decode(event.out))).toEqual({ early: true });
    expect(await (await s.api("/v2/waiters/evt_early", { token: ALICE.token })).json()).toEqual([]);
  });
  test("an attempt under way when its run fails keeps its own outcome: a 2XX is delivered, a retry it would need is cancelled", async () => {
    const url = `${rx.url}/race`;
    // A run's first delivery hands in the next step and answers only once that step has failed the
    // run (it is not retryable), as a slow endpoint would.
    rx.setHandler(async (req) => {
      const runId = req.headers.get("svc-workflow-runid")!;
      const sdk = { "Svc-Workflow-Sdk-Version": "1" };
      if (JSON.parse(req.text).length > 1)
        return new Response('{"error":"broken"}', { status: 489, headers: { ...sdk, "Svc-NonRetryable-Error": "true" } });
      expect((await batch([step(runId, url, 1, "one")])).status).toBe(200);
      await waitUntil(async () => (await runLog(runId))?.workflowState === "RUN_FAILED", { what: `${runId} failed` });
      return new Response("{}", { status: runId === "wfr_race_ok" ? 200 : 500, headers: sdk });
    });
    const [ok] = await (await batch([trigger("wfr_race_ok", url, "a", { "Svc-Retries": "1" })])).json();
    const [retrying] = await (await batch([trigger("wfr_race_retry", url, "b", { "Svc-Retries": "1" })])).json();
    await flush(s.api);
    // Each first delivery was attempted once: the one that needed a retry was cancelled instead.
    expect(rx.received.filter((r) => JSON.parse(r.text).length === 1)).toHaveLength(2);
    const states = async (messageId: string) =>
      (await (await s.api(`/v2/logs?messageId=${messageId}`, { token: ALICE.token })).json()).events.map((e: { state: string }) => e.state);
    expect(await states(ok.messageId)).toContain("DELIVERED");
    expect(await states(ok.messageId)).not.toContain("CANCELED");
    expect(await states(retrying.messageId)).toContain("CANCELED");
    const next = (run: { steps: Array<{ type: string; steps: Array<{ state: string }> }> }) => run.steps.find((g) => g.type === "next")!.steps.map((e) => e.state);
    expect(next(await runLog("wfr_race_ok"))).toEqual(["STEP_FAILED"]);
    expect(next(await runLog("wfr_race_retry"))).toEqual(["STEP_CANCELED", "STEP_FAILED"]);
    // One DLQ entry per failed run: the step that failed it.
    const { messages } = await (await s.api("/v2/dlq", { token: ALICE.token })).json();
    expect(messages.map((m: { workflowRunId: string }) => m.workflowRunId).sort()).toEqual(["wfr_race_ok", "wfr_race_retry"]);
  });
});
