import type { Where } from "../store/where.ts";
import type { Filter } from "./filter.ts";
import { urlPartsSql } from "./url-parts.ts";

/** Where a table keeps what the filters look at; the other columns are named alike everywhere. */
export interface FilterColumns {
  /** Absent where rows are no messages (workflow runs): the caller matches message ids itself. */
  messageId?: string;
  /** The time `fromDate` and `toDate` bound. */
  time: string;
  dlqId?: string;
  /** The workflow run an entry failed (`workflowRunId` and `source=workflow` filters). */
  workflowRunId?: string;
  /** That run's creation time and its failure function's state. */
  workflowCreatedAt?: string;
  failureFunctionState?: string;
  state?: string;
  responseStatus?: string;
}

/** Adds every condition of `filter` to `where`: OR within one filter, AND across filters. */
export function applyFilter(where: Where, f: Filter, c: FilterColumns): Where {
  if (c.messageId) where.in(c.messageId, f.messageIds);
  where
    .in("url", f.urls)
    .in("topic_name", f.topicNames)
    .in("schedule_id", f.scheduleIds)
    .in("queue_name", f.queueNames)
    .in("flow_key", f.flowControlKeys)
    .in("caller_ip", f.callerIps)
    .add(c.time, ">=", f.fromDate)
    .add(c.time, "<=", f.toDate);
  if (c.dlqId) where.in(c.dlqId, f.dlqIds);
  if (c.workflowRunId) {
    where.in(c.workflowRunId, f.workflowRunIds);
    if (f.sources?.length === 1 && f.sources[0] === "workflow") where.raw(`${c.workflowRunId} IS NOT NULL`);
  }
  if (c.workflowCreatedAt) where.in(c.workflowCreatedAt, f.workflowCreatedAts);
  if (c.failureFunctionState) where.in(c.failureFunctionState, f.failureFunctionStates);
  if (c.state) where.in(c.state, f.states);
  if (c.responseStatus) where.in(c.responseStatus, f.responseStatuses);
  if (f.labels?.length) where.raw(anyOf(f.labels.map((label) => `instr(',' || label || ',', ${where.bind(`,${label},`)}) > 0`)));
  if (f.hosts?.length) {
    const hosts = f.hosts.map((h) => where.bind(h));
    // The substring test rejects most rows cheaply before the URL is taken apart.
    where.raw(anyOf(hosts.map((h) => `instr(lower(url), ${h}) > 0`)));
    where.raw(`EXISTS (SELECT 1 FROM ${urlPartsSql("url")} WHERE host_port IN (${hosts.join(", ")}) OR host_name IN (${hosts.join(", ")}))`);
  }
  if (f.paths?.length) {
    const paths = f.paths.map((p) => where.bind(p));
    where.raw(anyOf(paths.map((p) => `instr(url, ${p}) > 0`)));
    where.raw(`EXISTS (SELECT 1 FROM ${urlPartsSql("url")} WHERE path IN (${paths.join(", ")}))`);
  }
  return where;
}

const anyOf = (tests: string[]) => `(${tests.join(" OR ")})`;
