/**
 * How many bytes of JSON one page of a listing (`GET /v2/dlq`, `/v2/logs`, `/v2/events`) may hold.
 * Entries carry whole bodies (up to the plan's max message size), so a page of 100 could otherwise
 * reach gigabytes. Documented in docs/messaging-api.md.
 */
export const PAGE_BYTE_BUDGET = 4 * 1024 * 1024;

const ENVELOPE_BYTES = 128;

export interface Page<V> {
  items: V[];
  /** Where the next page starts; absent on the last page. */
  cursor?: string;
}

/**
 * Takes entries in order until `count` of them, or until the next one would take the page past
 * `budget` bytes; then the cursor is the position of the last one taken. A page holds at least
 * one entry, so an entry larger than the budget comes alone and the cursor still reaches every
 * entry. `entries` is read lazily: rows past the page are never loaded.
 */
export function boundedPage<T, V>(
  entries: Iterable<T>,
  opts: { count: number; view: (entry: T) => V; positionOf: (entry: T) => number; budget?: number },
): Page<V> {
  const budget = opts.budget ?? PAGE_BYTE_BUDGET;
  const items: V[] = [];
  // What the answer adds around the entries: the object, its keys, the cursor, the array.
  let bytes = ENVELOPE_BYTES;
  let last: T | undefined;
  for (const entry of entries) {
    const view = opts.view(entry);
    const size = Buffer.byteLength(JSON.stringify(view)) + 1; // and its comma
    if (items.length > 0 && bytes + size > budget) return { items, cursor: String(opts.positionOf(last!)) };
    items.push(view);
    bytes += size;
    last = entry;
    if (items.length === opts.count) return { items, cursor: String(opts.positionOf(entry)) };
  }
  return { items };
}
