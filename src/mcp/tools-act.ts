import { z } from "zod";
import type { Account } from "../accounts/accounts.ts";
import { notFound } from "../core/errors.ts";
import { readBodyLimited } from "../http/body.ts";
import { parseDestination } from "../messages/destination.ts";
import type { McpDeps } from "./deps.ts";
import { headerMap, tool, type Tool } from "./tool.ts";

/** A text as the request body the HTTP route would read (the same size limit, the same error). */
const bodyOf = (account: Account, text: string | undefined) =>
  readBodyLimited(new Request("http://mcp.invalid/", { method: "POST", body: text ?? "" }), account.limits.maxMessageSize);

/** Tools that change state: each calls the service its HTTP route calls. */
export function actionTools(deps: McpDeps): Tool[] {
  const { ctx } = deps;
  return [
    tool({
      name: "publish",
      description:
        "Publish a message to a URL or a URL Group, as POST /v2/publish/{destination}: settings (delay, retries, " +
        "flow control, deduplication, labels...) go in `headers` under the messaging API's header names.",
      input: {
        destination: z.string().min(1).describe("a URL (http:// or https://) or a URL Group name"),
        body: z.string().optional().describe("the message body, delivered as is"),
        headers: headerMap,
      },
      readOnly: false,
      run: async (account, args) => {
        const { destination, query } = parseDestination(args.destination, ctx.dialect);
        const body = await bodyOf(account, args.body);
        const result = await deps.publisher.publish({ account, destination, headers: new Headers(args.headers), query, body });
        return result.body;
      },
    }),
    tool({
      name: "retry_dlq",
      description: "Re-publish a DLQ entry as a new message (it leaves the DLQ); `headers` override its stored settings.",
      input: { dlqId: z.string().min(1), headers: headerMap },
      readOnly: false,
      run: async (account, { dlqId, headers }) => {
        const [messageId] = await deps.dlq.retry(account, [dlqId], new Headers(headers));
        if (!messageId) throw notFound(`DLQ message ${dlqId} not found`);
        return { messageId };
      },
    }),
    tool({
      name: "delete_dlq",
      description: "Delete a DLQ entry.",
      input: { dlqId: z.string().min(1) },
      readOnly: false,
      destructive: true,
      run: async (account, { dlqId }) => {
        if (!(await deps.dlq.delete(account.id, dlqId))) throw notFound(`DLQ message ${dlqId} not found`);
        return { deleted: 1 };
      },
    }),
    tool({
      name: "notify_event",
      description: "Notify the workflow steps waiting for an event (only one run's wait with workflowRunId); as POST /v2/notify.",
      input: {
        eventId: z.string().min(1),
        data: z.string().optional().describe("the event's data: the waiting step receives it as its result"),
        workflowRunId: z.string().min(1).optional().describe("only this run's wait (kept until the run waits for it)"),
      },
      readOnly: false,
      run: async (account, { eventId, data, workflowRunId }) =>
        deps.waits.notify(account, eventId, await bodyOf(account, data), workflowRunId),
    }),
    tool({
      name: "rerun_workflow_run",
      description:
        "Run a workflow run again from one of its steps, as POST /v2/workflows/runs/{workflowRunId}/rerun: a new run " +
        "whose endpoint finds the steps before that one completed (their results kept, or the ones `results` gives) " +
        "and runs it and what follows; the source run is left as it is. `headers` override the run's settings " +
        "(retries, delay, flow control, label) under the messaging API's header names.",
      input: {
        workflowRunId: z.string().min(1),
        fromStep: z
          .union([z.string().min(1), z.number().int().min(1)])
          .describe("the step to run again from: its stepId or stepName as the run's log shows it (`init`: from the start)"),
        results: z.record(z.unknown()).optional().describe("new results for steps the rerun keeps, by stepName"),
        headers: headerMap,
      },
      readOnly: false,
      run: (account, { workflowRunId, fromStep, results, headers }) =>
        deps.rerun.rerun(account, workflowRunId, { fromStep, results }, new Headers(headers)),
    }),
    ...pauseTools("schedule", "scheduleId", (account, id, paused) => deps.schedules.setPaused(account, id, paused)),
    ...pauseTools("queue", "queueName", (account, name, paused) =>
      ctx.commit.run((tx) => deps.queues.setPaused(tx, account, name, paused, ctx.clock.now())),
    ),
    ...pauseTools("flow_control_key", "flowControlKey", (account, key, paused) =>
      paused ? deps.flow.pause(account, key) : deps.flow.resume(account, key),
    ),
    tool({
      name: "advance_clock",
      description:
        "Move a manual clock forward (svcd started with --clock manual), firing every due timer in time order: " +
        "delays, retries, schedules. With flush, waits after each timer until deliveries are idle.",
      input: {
        ms: z.number().int().nonnegative().optional().describe("move forward by this many ms"),
        to: z.number().int().nonnegative().optional().describe("move to this Unix time in ms"),
        flush: z.boolean().optional().describe("after each fired timer, wait until deliveries are idle"),
      },
      readOnly: false,
      run: ({}, { ms, to, flush }) => deps.control.advance({ ms, to }, flush),
    }),
    tool({
      name: "flush",
      description: "Deliver everything due now; answers once nothing is due or in flight.",
      input: { timeoutMs: z.number().int().min(1).max(600_000).optional().describe("ms to wait (default 10000)") },
      readOnly: false,
      idempotent: true,
      run: ({}, { timeoutMs }) => deps.control.flush(timeoutMs),
    }),
    tool({
      name: "reset",
      description:
        "Wipe the account's messages, DLQ, logs, URL Groups, schedules, queues, workflow runs and statistics " +
        "(not its credentials).",
      input: {},
      readOnly: false,
      destructive: true,
      idempotent: true,
      run: (account) => deps.control.reset(account.id),
    }),
  ];
}

type SetPaused = (account: Account, id: string, paused: boolean) => Promise<unknown>;

/** `pause_<kind>` and `resume_<kind>` for a thing named by `field`. */
function pauseTools(kind: string, field: string, setPaused: SetPaused): Tool[] {
  const label = kind.replaceAll("_", "-");
  return [true, false].map((paused) =>
    tool({
      name: `${paused ? "pause" : "resume"}_${kind}`,
      description: paused
        ? `Pause a ${label}: nothing of it is delivered (or fired) until it is resumed.`
        : `Resume a paused ${label}.`,
      input: { [field]: z.string().min(1) },
      readOnly: false,
      idempotent: true,
      run: async (account, args) => {
        await setPaused(account, String(args[field]), paused);
        return { [field]: args[field], paused };
      },
    }),
  );
}
