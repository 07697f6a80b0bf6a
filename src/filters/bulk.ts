import { optionalInt, parseCursor } from "../http/query.ts";
import { parseFilter, type Filter, type FilterKey } from "./filter.ts";

/** A bulk operation: the entries matching `filter`, oldest first, after `cursor`, at most `count`. */
export interface BulkSelection {
  filter: Filter;
  count: number;
  /** The position of the last entry the previous call acted on (null: from the start). */
  after: number | null;
}

export interface BulkOptions {
  accepts: readonly FilterKey[];
  /** The dialect's token query parameter: part of the request, never a filter. */
  tokenParam: string;
  /** Without `count` and without ids. */
  defaultCount: number;
  maxCount: number;
  /** `dlqIds` or `messageIds`: given alone, all of those ids are acted on. */
  ids: "dlqIds" | "messageIds";
}

/**
 * Reads a bulk operation from the query and the JSON body. Its filters are strict (an unknown key
 * or an empty filter is 400): a typo must never widen a bulk delete to everything.
 */
export function readBulkSelection(query: URLSearchParams, body: Record<string, unknown>, o: BulkOptions): BulkSelection {
  const filter = parseFilter({ query, body }, { accepts: o.accepts, strict: true, control: ["count", "cursor", o.tokenParam] });
  const pick = (key: string) => body[key] ?? query.get(key) ?? undefined;
  const ids = o.ids === "dlqIds" ? filter.dlqIds : filter.messageIds;
  const count = optionalInt(pick("count"), "count", { min: 1, max: o.maxCount }) ?? Math.min(ids?.length ?? o.defaultCount, o.maxCount);
  return { filter, count, after: parseCursor(pick("cursor")) };
}

/**
 * The entries to act on, from up to `count + 1` matches: the extra one only tells that more
 * match, and then the answer carries the cursor to continue from.
 */
export function takePage<T>(matches: T[], count: number, positionOf: (entry: T) => number): { page: T[]; cursor?: string } {
  const page = matches.slice(0, count);
  return matches.length > count ? { page, cursor: String(positionOf(page[page.length - 1]!)) } : { page };
}
