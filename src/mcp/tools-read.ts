import type { Account } from "../accounts/accounts.ts";
import { notFound } from "../core/errors.ts";
import { dlqPage } from "../dlq/routes.ts";
import { DLQ_FILTERS, WORKFLOW_LOG_FILTERS } from "../filters/filter.ts";
import { parseCursor } from "../http/query.ts";
import { EVENT_STATES } from "../logs/model.ts";
import { listLogEntries } from "../logs/routes.ts";
import { compact, messageView } from "../messages/views.ts";
import { RUN_STATES, STEP_STATES } from "../workflows/model.ts";
import { logsQuery } from "../workflows/log-query.ts";
import { z } from "zod";
import type { McpDeps } from "./deps.ts";
import { asRequest, messageFilters, pageSize, queryOf, tool, type Tool } from "./tool.ts";

const logState = z.string().optional().describe(`states, comma separated: ${EVENT_STATES.join(", ")} or IN_PROGRESS`);

/** Tools that only read: listings and single items, each the answer of the matching GET route. */
export function readTools(deps: McpDeps): Tool[] {
  const logs = (account: Account, args: Record<string, unknown>) => listLogEntries(deps.events, account.id, queryOf(args));
  return [
    tool({
      name: "list_logs",
      description: "The message log (every state change of every message), newest first, filtered; as GET /v2/logs.",
      input: { ...messageFilters, state: logState, count: pageSize(1000) },
      readOnly: true,
      run: async (account, args) => {
        const { cursor, entries } = await logs(account, args);
        return compact({ cursor, logs: entries });
      },
    }),
    tool({
      name: "list_messages",
      description:
        "Messages with their latest state, newest first, filtered: the log page collapsed to one entry per message " +
        "(a message may show again on a later page with an older state).",
      input: { ...messageFilters, state: logState, count: pageSize(1000) },
      readOnly: true,
      run: async (account, args) => {
        const { cursor, entries } = await logs(account, args);
        const seen = new Set<unknown>();
        const messages = entries.filter((e) => !seen.has(e.messageId) && seen.add(e.messageId));
        return compact({ cursor, messages });
      },
    }),
    tool({
      name: "get_message",
      description:
        "One message: its stored state while pending, its timeline (log entries, oldest first) and its DLQ entry if it has one.",
      input: { messageId: z.string().min(1) },
      readOnly: true,
      run: async (account, { messageId }) => {
        const pending = await deps.messages.read(account.id, messageId);
        const timeline = (await logs(account, { messageId, count: 1000 })).entries.reverse();
        const dead = await dlqPage(deps.dlqStore, deps.dlqFields, account.id, queryOf({ messageId }), DLQ_FILTERS);
        if (!pending && timeline.length === 0 && dead.messages.length === 0) throw notFound(`message ${messageId} not found`);
        return compact({ message: pending ? messageView(pending) : undefined, timeline, dlq: dead.messages[0] });
      },
    }),
    tool({
      name: "list_dlq",
      description: "Dead letters (messages whose retries ran out), newest first, filtered; as GET /v2/dlq.",
      input: {
        ...messageFilters,
        dlqIds: z.string().optional().describe("DLQ ids, comma separated"),
        responseStatus: z.number().int().min(0).max(999).optional().describe("the receiver's last HTTP status"),
        count: pageSize(100),
      },
      readOnly: true,
      run: (account, args) => dlqPage(deps.dlqStore, deps.dlqFields, account.id, queryOf(args), DLQ_FILTERS),
    }),
    tool({
      name: "list_workflow_runs",
      description: "Workflow runs with their steps, newest first, filtered; as GET /v2/workflows/logs.",
      input: {
        workflowRunId: z.string().optional().describe("run ids, comma separated"),
        workflowUrl: z.string().optional().describe("workflow URLs"),
        state: z
          .string()
          .optional()
          .describe(`run states, or step states (runs with such a step), comma separated: ${[...RUN_STATES, ...STEP_STATES].join(", ")}`),
        fromDate: messageFilters.fromDate,
        toDate: messageFilters.toDate,
        cursor: messageFilters.cursor,
        count: pageSize(100),
      },
      readOnly: true,
      run: async (account, { cursor, count, ...filters }) => {
        const query = logsQuery(asRequest(queryOf(filters)), WORKFLOW_LOG_FILTERS);
        return compact(await deps.runs.logs(account.id, query, parseCursor(cursor), count ?? 100));
      },
    }),
    tool({
      name: "get_workflow_run",
      description: "One workflow run with its steps.",
      input: { workflowRunId: z.string().min(1) },
      readOnly: true,
      run: async (account, { workflowRunId }) => {
        const query = logsQuery(asRequest(queryOf({ workflowRunId })), WORKFLOW_LOG_FILTERS);
        const [run] = (await deps.runs.logs(account.id, query, null, 1)).runs;
        if (!run) throw notFound(`workflow run ${workflowRunId} not found`);
        return run;
      },
    }),
    tool({
      name: "list_queues",
      description: "Every queue with its parallelism, lag and whether it is paused; as GET /v2/queues.",
      input: {},
      readOnly: true,
      run: async (account) => deps.queues.list(account),
    }),
    tool({
      name: "list_schedules",
      description: "Every schedule; as GET /v2/schedules.",
      input: {},
      readOnly: true,
      run: (account) => deps.schedules.list(account),
    }),
    tool({
      name: "list_flow_control_keys",
      description: "Every flow-control key with its limits, waiting messages and whether it is paused; as GET /v2/flowControl.",
      input: {},
      readOnly: true,
      run: (account) => deps.flow.list(account),
    }),
  ];
}
