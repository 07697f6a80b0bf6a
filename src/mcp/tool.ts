import { z, type ZodRawShape } from "zod";
import type { Account } from "../accounts/accounts.ts";

/**
 * One MCP tool: its input as a zod shape (the SDK publishes it as JSON Schema and validates calls
 * against it) and what it runs for the calling account. `readOnly` tools change nothing.
 */
export interface Tool {
  name: string;
  description: string;
  input: ZodRawShape;
  readOnly: boolean;
  /** Removes data that cannot be brought back (a DLQ entry, the whole account's state). */
  destructive?: boolean;
  /** Calling it twice leaves the same state as once (pause, resume). */
  idempotent?: boolean;
  run(account: Account, args: any): Promise<unknown>;
}

type Args<S extends ZodRawShape> = z.objectOutputType<S, z.ZodTypeAny>;

/** A tool whose `run` sees its arguments typed by its shape. */
export const tool = <S extends ZodRawShape>(
  def: Omit<Tool, "input" | "run"> & { input: S; run(account: Account, args: Args<S>): Promise<unknown> },
): Tool => def;

/** Tool arguments as the query string an HTTP listing reads (its filter parser then checks them). */
export function queryOf(args: Record<string, unknown>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(args)) if (value !== undefined) query.set(key, String(value));
  return query;
}

/** The query as a request to a parser that reads one (the workflow logs' query reader). */
export const asRequest = (query: URLSearchParams) => new Request(`http://mcp.invalid/?${query}`);

const text = (description: string) => z.string().min(1).optional().describe(description);
const unixMs = (description: string) => z.number().int().nonnegative().optional().describe(description);

/** The filters of message listings (logs, messages, DLQ), as the HTTP query parameters of the same names. */
export const messageFilters = {
  messageId: text("only this message (several comma separated)"),
  url: text("destination URLs"),
  topicName: text("URL Group names"),
  scheduleId: text("schedule ids"),
  queueName: text("queue names"),
  label: text("labels"),
  flowControlKey: text("flow-control keys"),
  fromDate: unixMs("from this time, Unix ms"),
  toDate: unixMs("up to this time, Unix ms"),
  cursor: text("the cursor of the previous page"),
};

export const pageSize = (max: number) => z.number().int().min(1).max(max).optional().describe(`entries per page (1-${max})`);

/** Message headers (publish settings such as the dialect's Delay, Retries, Flow-Control-Key). */
export const headerMap = z.record(z.string()).optional().describe("HTTP headers, as on the messaging API (the publish settings)");
