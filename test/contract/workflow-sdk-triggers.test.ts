/**
 * How runs start and what travels with them, with the official workflow SDK: a caller without
 * the SDK starts a run with `POST /v2/trigger/{url}` and the endpoint's SDK runs it; the
 * user's headers of a trigger reach every later step and a `context.call`'s answer; a trigger
 * above a plan limit is refused with 412.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { QstashError } from "@upstash/qstash";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld();
});
afterAll(async () => {
  await w?.stop();
});

describe("starting runs", () => {
  test("POST /v2/trigger/{url} from a caller without the SDK: the endpoint's SDK runs the workflow under the answered run id", async () => {
    const ran: unknown[] = [];
    const url = w.serve<string>("/wf/from-curl", async (context) => {
      const got = await context.run("read", () => context.requestPayload);
      await context.run("record", () => void ran.push(got));
      return `handled ${got}`;
    });
    const res = await w.svc.api(`/v2/trigger/${url}`, { method: "POST", body: "from curl", headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(200);
    const { workflowRunId, workflowCreatedAt } = (await res.json()) as { workflowRunId: string; workflowCreatedAt: number };
    await w.flush();
    expect(ran).toEqual(["from curl"]);
    const run = (await w.run(workflowRunId))!;
    expect(run).toMatchObject({ workflowState: "RUN_SUCCESS", workflowRunCreatedAt: workflowCreatedAt, workflowRunResponse: '"handled from curl"' });
    expect(run.steps.filter((g) => g.type !== "next").map((g) => g.steps[0]!.stepName)).toEqual(["init", "read", "record"]);
  });

  test("the trigger's own headers reach every later step and a context.call's answer, though the SDK sends them only with the trigger", async () => {
    const seen: Array<{ kind: string; tenant: string | null }> = [];
    const third = w.route("/third/plain", () => new Response("ok"));
    const url = w.serve("/wf/tenant", async (context) => {
      await context.run("first", () => 1);
      await context.call("ask", { url: third });
      await context.run("last", () => 2);
    });
    const served = w.routeHandler("/wf/tenant")!;
    w.route("/wf/tenant", (request) => {
      seen.push({ kind: request.headers.get("upstash-workflow-callback") ? "call answer" : "step", tenant: request.headers.get("x-tenant") });
      return served(request);
    });
    const { workflowRunId } = await w.client.trigger({ url, headers: { "x-tenant": "acme" } });
    await w.flush();
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
    expect(seen.filter((s) => s.kind === "call answer")).toEqual([{ kind: "call answer", tenant: "acme" }]);
    expect(seen.filter((s) => s.kind === "step").length).toBeGreaterThanOrEqual(4);
    expect(seen.every((s) => s.tenant === "acme")).toBe(true);
  });
  test("a trigger above a plan limit (retries past the plan's cap) is refused with 412 and starts nothing", async () => {
    const url = w.serve("/wf/too-many-retries", async (context) => {
      await context.run("never", () => 1);
    });
    const refused = await w.client.trigger({ url, retries: 50 }).catch((error: unknown) => error);
    expect((refused as QstashError).status).toBe(412);
    await w.flush();
    expect((await w.client.logs({ workflowUrl: url })).runs).toEqual([]);
  });
});
