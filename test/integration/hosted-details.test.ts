/**
 * What the hosted API's log entries carry beside the state (issue 24 items 9-11): the destination's
 * answer headers on ERROR, the message's callbacks and timeout, `GET /v2/flowControl?search=`, and
 * the documented status codes. Plain HTTP (the official client's `Log` type does not expose these
 * fields), in both dialects.
 */
import { Client } from "@upstash/qstash";
import { Client as WorkflowClient } from "@upstash/workflow";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { dlqEntryOf, waitForState } from "../helpers/inspect.ts";
import { jsonBody } from "../helpers/accounts.ts";

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver((req) =>
    req.path.startsWith("/fail")
      ? new Response("nope", { status: 500, headers: { "x-why": "down for maintenance" } })
      : new Response("ok", { headers: { "x-why": "fine" } }),
  );
});
afterAll(() => rx.stop());

for (const dialect of ["svc", "upstash"] as const) {
  describe(`${dialect} dialect`, () => {
    let s: TestServer;
    const P = dialect === "svc" ? "Svc" : "Upstash";
    beforeAll(async () => {
      s = await startTestServer({ config: { dialect, retryDelayScale: 0 } });
    });
    afterAll(() => s.stop());

    type Entry = Record<string, any>;
    const logs = async (id: string): Promise<Entry[]> =>
      ((await (await s.api(`/v2/logs?messageId=${id}`)).json()) as { logs: Entry[] }).logs.reverse();

    test("log entries: responseHeaders on ERROR, the message's callbacks and timeout on every entry", async () => {
      const res = await s.api(`/v2/publish/${rx.url}/fail/a`, {
        method: "POST",
        body: "x",
        headers: {
          [`${P}-Retries`]: "0",
          [`${P}-Timeout`]: "20s",
          [`${P}-Callback`]: `${rx.url}/cb`,
          [`${P}-Callback-Forward-Cb-Secret`]: "c1",
          [`${P}-Failure-Callback`]: `${rx.url}/fcb`,
          [`${P}-Failure-Callback-Forward-Fcb-Secret`]: "f1",
        },
      });
      expect(res.status).toBe(200);
      const { messageId } = (await res.json()) as { messageId: string };
      await waitForState(s, messageId, ["FAILED"]);
      const entries = await logs(messageId);
      expect(entries.map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "FAILED"]);
      for (const e of entries) {
        expect(e.callback).toBe(`${rx.url}/cb`);
        expect(e.callbackHeaders).toEqual({ "Cb-Secret": ["c1"] });
        expect(e.failureCallback).toBe(`${rx.url}/fcb`);
        expect(e.failureCallbackHeaders).toEqual({ "Fcb-Secret": ["f1"] });
        expect(e.timeout).toBe(20_000);
      }
      const error = entries.find((e) => e.state === "ERROR")!;
      expect(error.responseStatus).toBe(500);
      expect(error.responseHeaders["X-Why"]).toEqual(["down for maintenance"]);
      // Only the ERROR entry carries the answer's headers.
      expect(entries.filter((e) => e.responseHeaders).map((e) => e.state)).toEqual(["ERROR"]);
    });

    test("a message without callbacks has none in its log", async () => {
      const res = await s.api(`/v2/publish/${rx.url}/ok`, { method: "POST", body: "x" });
      const { messageId } = (await res.json()) as { messageId: string };
      const entries = await waitForState(s, messageId, ["DELIVERED"]);
      expect(entries.length).toBe(3);
      for (const e of await logs(messageId)) {
        expect(e.callback).toBeUndefined();
        expect(e.failureCallbackHeaders).toBeUndefined();
        expect(e.responseHeaders).toBeUndefined();
        expect(typeof e.timeout).toBe("number");
      }
    });

    test("GET /v2/flowControl?search= lists the keys whose name contains the text, ignoring case", async () => {
      for (const key of ["Billing-EU", "billing-us", "emails"]) {
        const res = await s.api(`/v2/publish/${rx.url}/ok`, {
          method: "POST",
          body: "x",
          // Delayed: the key is listed while its message waits.
          headers: { [`${P}-Flow-Control-Key`]: key, [`${P}-Flow-Control-Value`]: "parallelism=1", [`${P}-Delay`]: "1h" },
        });
        expect(res.status).toBe(200);
      }
      const keys = async (query: string) =>
        ((await (await s.api(`/v2/flowControl${query}`)).json()) as Array<{ flowControlKey: string }>).map((f) => f.flowControlKey);
      expect(await keys("?search=billing")).toEqual(["Billing-EU", "billing-us"]);
      expect(await keys("?search=MAIL")).toEqual(["emails"]);
      expect(await keys("?search=nothing-like-it")).toEqual([]);
      expect(await keys("")).toEqual(expect.arrayContaining(["Billing-EU", "billing-us", "emails"]));
    });

    test("201 where the hosted API documents it: notify, batch trigger, bulk DLQ retry", async () => {
      const notify = await s.api("/v2/notify/evt_nobody", { method: "POST", body: "data" });
      expect({ status: notify.status, body: await notify.json() }).toEqual({ status: 201, body: [] });
      const kept = await s.api("/v2/notify/wfr_later/evt_kept", { method: "POST", body: "data" });
      expect(kept.status).toBe(201);
      const batch = await s.api("/v2/batch/trigger", jsonBody("POST", [{ destination: `${rx.url}/wf` }]));
      expect(batch.status).toBe(201);
      expect((await batch.json())[0].workflowRunId).toMatch(/^wfr_/);

      const res = await s.api(`/v2/publish/${rx.url}/fail/bulk`, { method: "POST", body: "x", headers: { [`${P}-Retries`]: "0" } });
      const { messageId } = (await res.json()) as { messageId: string };
      await waitForState(s, messageId, ["FAILED"]);
      const { dlqId } = (await dlqEntryOf(s, messageId))!;
      const retried = await s.api("/v2/dlq/retry", jsonBody("POST", { dlqIds: [dlqId] }));
      expect(retried.status).toBe(201);
      expect(((await retried.json()) as { responses: unknown[] }).responses).toHaveLength(1);
    });

    if (dialect === "upstash")
      test("the official clients take those 201 answers: dlq.retry, workflow notify", async () => {
        const client = new Client({ baseUrl: s.url, token: s.token, retry: false });
        const { messageId } = await client.publish({ url: `${rx.url}/fail/sdk`, body: "x", retries: 0 });
        await waitForState(s, messageId, ["FAILED"]);
        const { dlqId } = (await dlqEntryOf(s, messageId))!;
        const answer = await client.dlq.retry([dlqId]);
        expect(answer.responses).toHaveLength(1);
        const workflows = new WorkflowClient({ baseUrl: s.url, token: s.token, retry: false });
        expect(await workflows.notify({ eventId: "evt_sdk", eventData: "hi" })).toEqual([]);
        expect(await workflows.notify({ eventId: "evt_sdk", eventData: "hi", workflowRunId: "wfr_sdk" })).toEqual([]);
      });
  });
}
