/**
 * Redact-Fields on a workflow run (issue 24 item 1), with the official workflow SDK: a run
 * triggered with `redact` runs on its real payload and headers, while its log (`client.logs()`),
 * its messages' logs and the messages themselves show `REDACTED:<sha256 hex>`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

const redacted = (value: string) => `REDACTED:${createHash("sha256").update(value).digest("hex")}`;
let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld();
});
afterAll(async () => {
  await w?.stop();
});

test("a run triggered with redact: steps see the real values, its log shows them redacted", async () => {
  const seen: Array<{ payload: unknown; auth: string | null }> = [];
  const url = w.serve<{ card: string }>("/wf/redacted", async (context) => {
    const card = await context.run("read card", () => context.requestPayload.card);
    await context.run("charge", () => void seen.push({ payload: card, auth: context.headers.get("authorization") }));
    return "charged";
  });
  const { workflowRunId } = await w.client.trigger({
    url,
    body: { card: "4111-1111" },
    headers: { Authorization: "Bearer wf-secret" },
    redact: { body: true, header: ["Authorization"] },
  });
  await w.flush();
  expect(seen).toEqual([{ payload: "4111-1111", auth: "Bearer wf-secret" }]);

  const run = (await w.run(workflowRunId))!;
  expect(run.workflowState).toBe("RUN_SUCCESS");
  const steps = run.steps.flatMap((g) => g.steps as unknown[]) as Array<{ stepName: string; out?: string; headers?: Record<string, string[]> }>;
  const init = steps.find((s) => s.stepName === "init")!;
  expect(init.out).toBe(redacted('{"card":"4111-1111"}'));
  expect(steps.find((s) => s.stepName === "read card")!.out).toBe(redacted('"4111-1111"'));
  for (const step of steps) if (step.headers?.Authorization) expect(step.headers.Authorization).toEqual([redacted("Bearer wf-secret")]);

  const texts = [JSON.stringify(run), await (await w.svc.api("/v2/logs?count=1000")).text()];
  for (const text of texts) {
    expect(text).not.toContain("wf-secret");
    expect(text).not.toContain("4111-1111");
  }
});
