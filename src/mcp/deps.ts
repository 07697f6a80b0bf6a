import type { AppContext } from "../context/app-context.ts";
import type { controlActions } from "../control/routes.ts";
import type { DlqFields } from "../dlq/routes.ts";
import type { DlqService } from "../dlq/service.ts";
import type { DlqStorage } from "../dlq/storage.ts";
import type { FlowControlService } from "../flow-control/service.ts";
import type { EventStorage } from "../logs/storage.ts";
import type { PublishService } from "../messages/publish.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { QueueService } from "../queues/service.ts";
import type { ScheduleService } from "../schedules/service.ts";
import type { WorkflowRerun } from "../workflows/rerun.ts";
import type { RunService } from "../workflows/runs.ts";
import type { WaitService } from "../workflows/waits.ts";

/** The services the MCP tools call: the same ones the HTTP routes of each operation call. */
export interface McpDeps {
  ctx: AppContext;
  publisher: PublishService;
  messages: MessageStorage;
  events: EventStorage;
  dlqStore: DlqStorage;
  dlq: DlqService;
  dlqFields: DlqFields;
  queues: QueueService;
  schedules: ScheduleService;
  flow: FlowControlService;
  runs: RunService;
  waits: WaitService;
  rerun: WorkflowRerun;
  control: ReturnType<typeof controlActions>;
}
