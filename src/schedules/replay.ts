import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import type { PublishInput } from "../messages/publish.ts";
import { toHeaders } from "../util/header-pairs.ts";
import { readScheduleHeaders } from "./columns.ts";
import type { ScheduleRow } from "./storage.ts";

/** Transport and credentials: never stored with a schedule, never replayed. */
const NOT_REPLAYED = new Set([
  "authorization", "host", "content-length", "connection", "keep-alive", "proxy-authenticate",
  "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "expect",
]);

/**
 * The creating request's headers a trigger replays: every publish header (configuration, forwarded,
 * Content-Type, and the rest for `Header-Forward`), without the schedule's own ones.
 */
export function replayableHeaders(headers: Headers, dialect: Dialect): Array<[string, string]> {
  const own = new Set([`${dialect.lowerPrefix}cron`, `${dialect.lowerPrefix}schedule-id`]);
  const pairs: Array<[string, string]> = [];
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (!NOT_REPLAYED.has(lower) && !own.has(lower)) pairs.push([name, value]);
  });
  return pairs;
}

/** The publish a trigger makes: exactly what the creating request would have published. */
export function replayInput(row: ScheduleRow, account: Account): PublishInput {
  return {
    account,
    destination: row.destination_kind === "url" ? { kind: "url", url: row.destination } : { kind: "group", name: row.destination },
    headers: toHeaders(readScheduleHeaders(row.headers)),
    query: new URLSearchParams(row.query),
    body: row.body,
    callerIp: row.caller_ip ?? undefined,
    scheduleId: row.id,
  };
}
