/**
 * Workflow sleeps, waits and their timeouts follow svcd's manual clock: a sleeping step is not
 * delivered a moment before its time and is delivered as soon as the clock reaches it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { WorkflowRetryAfterError } from "@upstash/workflow";
import { startWorkflowWorld, type WorkflowWorld } from "../helpers/workflow-world.ts";

let w: WorkflowWorld;

beforeAll(async () => {
  w = await startWorkflowWorld({ config: { clock: "manual" } });
});
afterAll(async () => {
  await w?.stop();
});

describe("workflow time on the manual clock", () => {
  test("context.sleep: the next step is not delivered before the sleep ends, and is right after", async () => {
    const ran: string[] = [];
    const url = w.serve("/wf/sleep", async (context) => {
      await context.run("before", () => ran.push("before"));
      await context.sleep("nap", 120);
      await context.run("after", () => ran.push("after"));
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(ran).toEqual(["before"]);
    await w.advance(119_999);
    expect(ran).toEqual(["before"]);
    await w.advance(1);
    expect(ran).toEqual(["before", "after"]);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
  });

  test("context.sleepUntil: the step waits for the given instant on the server clock", async () => {
    const ran: string[] = [];
    const wakeAt = Math.floor((await w.now()) / 1000) + 3600;
    const url = w.serve("/wf/sleep-until", async (context) => {
      await context.sleepUntil("until", wakeAt);
      await context.run("after", () => ran.push("after"));
    });
    await w.client.trigger({ url });
    await w.flush();
    await w.advance(wakeAt * 1000 - (await w.now()) - 1);
    expect(ran).toEqual([]);
    await w.advance(1);
    expect(ran).toEqual(["after"]);
  });

  test("waitForEvent times out at its deadline: the run goes on with timeout true and no data", async () => {
    const results: unknown[] = [];
    const url = w.serve("/wf/wait-timeout", async (context) => {
      const outcome = await context.waitForEvent("wait", "never-comes", { timeout: "30s" });
      await context.run("record", () => {
        results.push(outcome);
      });
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(await w.client.getWaiters({ eventId: "never-comes" })).toHaveLength(1);
    await w.advance(29_999);
    expect(results).toEqual([]);
    await w.advance(1);
    expect(results).toEqual([{ eventData: undefined, timeout: true }]);
    expect(await w.client.getWaiters({ eventId: "never-comes" })).toEqual([]);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
  });

  test("a step that throws WorkflowRetryAfterError is tried again after the delay it asked for, not before", async () => {
    let attempts = 0;
    const url = w.serve("/wf/retry-after", async (context) => {
      await context.run("busy-then-fine", () => {
        if (++attempts === 1) throw new WorkflowRetryAfterError("the downstream is busy", 30);
        return "done";
      });
    });
    const { workflowRunId } = await w.client.trigger({ url });
    await w.flush();
    expect(attempts).toBe(1);
    // The SDK answered 429 with Retry-After: 30 (the default backoff would have tried again after 12 s).
    const [retrying] = (await w.run(workflowRunId))!.steps.filter((g) => g.type === "next").flatMap((g) => g.steps) as Array<{ nextDeliveryTime?: number; errors?: Array<{ status: number }> }>;
    expect(retrying!.errors![0]!.status).toBe(429);
    expect(retrying!.nextDeliveryTime).toBe((await w.now()) + 30_000);
    await w.advance(29_999);
    expect(attempts).toBe(1);
    await w.advance(1);
    expect(attempts).toBe(2);
    expect((await w.run(workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
  });

  test("runs that ended leave the logs with the plan's log retention; a running one stays", async () => {
    const url = w.serve("/wf/retained", async (context) => {
      await context.run("one", () => 1);
    });
    const waiting = w.serve("/wf/retained-waiting", async (context) => {
      await context.waitForEvent("forever", "retention-never", { timeout: "30d" });
    });
    const ended = await w.client.trigger({ url });
    const running = await w.client.trigger({ url: waiting });
    await w.flush();
    expect((await w.run(ended.workflowRunId))!.workflowState).toBe("RUN_SUCCESS");
    // The default plan keeps logs 7 days; retention runs every 10 minutes of the server clock.
    await w.advance(7 * 24 * 3600_000 + 11 * 60_000);
    expect(await w.run(ended.workflowRunId)).toBeUndefined();
    expect((await w.run(running.workflowRunId))!.workflowState).toBe("RUN_STARTED");
  });
});
