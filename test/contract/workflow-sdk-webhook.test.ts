/**
 * `context.createWebhook` reads the user id out of the client's token (the hosted service's
 * tokens are base64 JSON with a `UserID`): in the hosted dialect the default account's token has
 * that shape, and the webhook it builds, called by a third party without credentials, resumes
 * the waiting run.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hostedToken } from "../../src/accounts/hosted-token.ts";
import { DEFAULT_ACCOUNT } from "../../src/config/config.ts";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld({ token: hostedToken(DEFAULT_ACCOUNT.userId, DEFAULT_ACCOUNT.token) });
});
afterAll(async () => {
  await w?.stop();
});

test("a webhook from createWebhook, called without credentials, is the event waitForWebhook receives", async () => {
  const hooks: string[] = [];
  const received: unknown[] = [];
  const url = w.serve("/wf/webhook", async (context) => {
    const webhook = await context.createWebhook("make-hook");
    await context.run("share-hook", () => {
      hooks.push(webhook.webhookUrl);
    });
    const { request, timeout } = await context.waitForWebhook("wait-hook", webhook, "1h");
    await context.run("record", async () => {
      received.push({ timeout, method: request!.method, signature: request!.headers.get("x-signature"), body: await request!.text() });
    });
  });
  const { workflowRunId } = await w.client.trigger({ url });
  await w.flush();
  expect(hooks).toHaveLength(1);
  const hook = new URL(hooks[0]!);
  expect(hook.origin).toBe(w.svc.url);
  expect(hook.pathname).toStartWith(`/v2/workflows/hooks/${DEFAULT_ACCOUNT.userId}/${workflowRunId}/`);
  expect(received).toEqual([]);

  const res = await fetch(hooks[0]!, { method: "POST", headers: { "x-signature": "sig-1" }, body: "payment done" });
  expect(res.status).toBe(200);
  await w.flush();
  expect(received).toEqual([{ timeout: false, method: "POST", signature: "sig-1", body: "payment done" }]);
  expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
});

test("the default account's plain token still works beside its hosted shape", async () => {
  const plain = await w.svc.api("/v2/keys", { token: DEFAULT_ACCOUNT.token });
  const hosted = await w.svc.api("/v2/keys", { token: hostedToken(DEFAULT_ACCOUNT.userId, DEFAULT_ACCOUNT.token) });
  const wrongUser = await w.svc.api("/v2/keys", { token: hostedToken("someone-else", DEFAULT_ACCOUNT.token) });
  expect([plain.status, hosted.status, wrongUser.status]).toEqual([200, 200, 401]);
});
