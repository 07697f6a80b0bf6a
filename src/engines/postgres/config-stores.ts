import type { SQL } from "bun";
import type { AccountRow, AccountStorage } from "../../accounts/store.ts";
import { keyRowOf, type FlowKeyStorage, type KeySettings } from "../../flow-control/key-store.ts";
import type { FlowStorage } from "../../flow-control/store.ts";
import type { SearchIndexRow } from "../../management/search/store.ts";
import type { IndexRowBase, IndexStorage } from "../../management/shared/index-store.ts";
import type { UsageFixtureLedgerStorage, VectorIndexRow } from "../../management/vector/store.ts";
import type { FlowControl } from "../../model/message.ts";
import type { QueueRow, QueueStorage } from "../../queues/store.ts";
import type { EndpointRow, UrlGroupRow, UrlGroupStorage } from "../../url-groups/store.ts";
import { dueAgainStateSql } from "../../model/message.ts";
import { CachedTable } from "./cached-table.ts";
import type { PgMessageStore } from "./messages.ts";
import type { TickPart, Tx } from "./tick.ts";
import { bytes, num, numOrNull } from "./values.ts";

type Raw = Record<string, unknown>;

/** Columns PostgreSQL returns as BIGINT text that the stores hand out as numbers. */
function numbers<R>(columns: readonly string[]) {
  return (raw: Raw): R => {
    const row: Raw = { ...raw };
    for (const c of columns) if (c in row) row[c] = numOrNull(row[c]);
    return row as R;
  };
}

// --- accounts ---

export class PgAccountStore implements AccountStorage {
  constructor(readonly table: CachedTable<AccountRow & Raw>) {}
  all(): AccountRow[] {
    return this.table.all();
  }
  upsert(row: AccountRow): void {
    this.table.put({ ...row });
  }
  setKeys(id: string, current: string, next: string): void {
    const row = this.table.get(id);
    if (row) this.table.put({ ...row, current_signing_key: current, next_signing_key: next });
  }
}

// --- URL Groups ---

type EndpointFull = EndpointRow & { account_id: string; group_name: string };

let endpointCounter = 0;
/** Endpoint order across nodes without a round trip: milliseconds, then a counter. */
const nextEndpointSeq = () => Date.now() * 1024 + (endpointCounter++ % 1024);

export class PgUrlGroupStore implements UrlGroupStorage {
  constructor(
    readonly groups: CachedTable<UrlGroupRow & Raw>,
    readonly endpointsTable: CachedTable<EndpointFull & Raw>,
  ) {}
  private key(accountId: string, name: string) {
    return `${accountId}\u0000${name}`;
  }
  get(accountId: string, name: string): UrlGroupRow | undefined {
    return this.groups.get(this.key(accountId, name));
  }
  list(accountId: string): UrlGroupRow[] {
    return this.groups.where((g) => g.account_id === accountId).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  count(accountId: string): number {
    return this.groups.where((g) => g.account_id === accountId).length;
  }
  insert(accountId: string, name: string, nowMs: number): void {
    this.groups.put({ account_id: accountId, name, created_at: nowMs, updated_at: nowMs, default_headers: "[]" });
  }
  touch(accountId: string, name: string, nowMs: number): void {
    const g = this.get(accountId, name);
    if (g) this.groups.put({ ...g, updated_at: nowMs });
  }
  setDefaults(accountId: string, name: string, headers: Array<[string, string]>, nowMs: number): void {
    const g = this.get(accountId, name);
    if (g) this.groups.put({ ...g, default_headers: JSON.stringify(headers), updated_at: nowMs });
  }
  delete(accountId: string, name: string): boolean {
    for (const e of this.endpointsOf(accountId, name)) this.endpointsTable.remove(String(e.seq));
    return this.groups.remove(this.key(accountId, name));
  }
  endpoints(accountId: string, group: string): EndpointRow[] {
    return this.endpointsOf(accountId, group).map(({ seq, name, url }) => ({ seq, name, url }));
  }
  addEndpoint(accountId: string, group: string, name: string | undefined, url: string): number {
    const seq = nextEndpointSeq();
    this.endpointsTable.put({ seq, account_id: accountId, group_name: group, name: name ?? null, url });
    return seq;
  }
  setEndpointUrl(seq: number, url: string): void {
    const e = this.endpointsTable.get(String(seq));
    if (e) this.endpointsTable.put({ ...e, url });
  }
  deleteEndpoint(seq: number): void {
    this.endpointsTable.remove(String(seq));
  }
  deleteAccount(accountId: string): void {
    for (const g of this.list(accountId)) this.delete(accountId, g.name);
  }
  private endpointsOf(accountId: string, group: string): EndpointFull[] {
    return this.endpointsTable.where((e) => e.account_id === accountId && e.group_name === group).sort((a, b) => a.seq - b.seq);
  }
}

// --- queues ---

/**
 * Queue promotions: on PostgreSQL a queued message is always stored waiting (PARKED) and the
 * queue's head goes once the tick's messages are written, in two statements: the queues are
 * locked (FOR UPDATE), then — with a snapshot taken after the lock, so another node's promotion
 * committed meanwhile is counted — the oldest parked messages go while fewer than `parallelism`
 * have started. Promotions of one queue are thereby serialised across nodes: its parallelism is
 * never exceeded, whichever node publishes or delivers.
 */
export class PgQueuePromotions implements TickPart {
  private wanted: Array<{ accountId: string; name: string; nowMs: number }> = [];
  private taken: typeof this.wanted = [];
  /** Earliest dispatch time the last promotion set (the dispatcher's wake). */
  onPromoted: ((earliestDue: number) => void) | null = null;

  constructor(private readonly messages: PgMessageStore) {}

  request(accountId: string, name: string, nowMs: number): void {
    this.wanted.push({ accountId, name, nowMs });
  }
  mark(): number {
    return this.wanted.length;
  }
  rollback(mark: number): void {
    this.wanted.length = mark;
  }
  async apply(tx: Tx): Promise<void> {
    this.taken = this.wanted;
    this.wanted = [];
    if (this.taken.length === 0) return;
    const unique = new Map(this.taken.map((w) => [`${w.accountId}\u0000${w.name}`, w]));
    const accounts = [...unique.values()].map((w) => w.accountId);
    const names = [...unique.values()].map((w) => w.name);
    const nowMs = Math.max(...this.taken.map((w) => w.nowMs));
    await tx`
      SELECT 1 FROM queues q JOIN unnest(${accounts}::text[], ${names}::text[]) AS w(account_id, name)
        ON q.account_id = w.account_id AND q.name = w.name
      ORDER BY q.account_id, q.name FOR UPDATE OF q`;
    const promoted = await tx`
      WITH q AS (
        SELECT q.account_id, q.name, q.parallelism FROM queues q
        JOIN unnest(${accounts}::text[], ${names}::text[]) AS w(account_id, name) ON q.account_id = w.account_id AND q.name = w.name
        WHERE q.paused = 0
      ), room AS (
        SELECT q.account_id, q.name, q.parallelism - (
          SELECT count(*) FROM messages m WHERE m.account_id = q.account_id AND m.queue_name = q.name AND m.state <> 'PARKED'
        ) AS room FROM q
      ), heads AS (
        SELECT m.id, r.room, row_number() OVER (PARTITION BY m.account_id, m.queue_name ORDER BY m.seq) AS rn
        FROM messages m JOIN room r ON m.account_id = r.account_id AND m.queue_name = r.name
        WHERE m.state = 'PARKED' AND r.room > 0
      )
      UPDATE messages m SET state = ${tx.unsafe(dueAgainStateSql("m"))},
        dispatch_at = greatest(${nowMs}::bigint, m.not_before)
      FROM heads h WHERE m.id = h.id AND h.rn <= h.room
      RETURNING m.dispatch_at`;
    for (const r of promoted) this.messages.noteDue(num(r.dispatch_at));
    if (promoted.length > 0) this.onPromoted?.(Math.min(...promoted.map((r: Raw) => num(r.dispatch_at))));
  }
  finish(): void {
    this.taken = [];
  }
}

export class PgQueueStore implements QueueStorage {
  constructor(
    private readonly sql: SQL,
    readonly table: CachedTable<QueueRow & Raw>,
    private readonly promotions: PgQueuePromotions,
  ) {}
  private key(accountId: string, name: string) {
    return `${accountId}\u0000${name}`;
  }
  get(accountId: string, name: string): QueueRow | undefined {
    return this.table.get(this.key(accountId, name));
  }
  list(accountId: string): QueueRow[] {
    return this.table.where((q) => q.account_id === accountId).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  count(accountId: string): number {
    return this.table.where((q) => q.account_id === accountId).length;
  }
  insert(accountId: string, name: string, parallelism: number, paused: boolean, nowMs: number): void {
    this.table.put({ account_id: accountId, name, created_at: nowMs, updated_at: nowMs, parallelism, paused: paused ? 1 : 0 });
  }
  update(accountId: string, name: string, parallelism: number, paused: boolean, nowMs: number): void {
    const q = this.get(accountId, name);
    if (q) this.table.put({ ...q, parallelism, paused: paused ? 1 : 0, updated_at: nowMs });
  }
  delete(accountId: string, name: string): boolean {
    return this.table.remove(this.key(accountId, name));
  }
  deleteAccount(accountId: string): void {
    for (const q of this.list(accountId)) this.table.remove(this.key(accountId, q.name));
  }
  /** Always waits: the promotion after the tick's writes lets it go if there is room. */
  mustWait(accountId: string, name: string, _parallelism: number, nowMs: number): boolean {
    this.promotions.request(accountId, name, nowMs);
    return true;
  }
  promote(accountId: string, name: string, _parallelism: number, nowMs: number): number {
    this.promotions.request(accountId, name, nowMs);
    return 1;
  }
  async lag(accountId: string, name: string): Promise<number> {
    const [row] = await this.sql`SELECT count(*) AS n FROM messages WHERE account_id = ${accountId} AND queue_name = ${name}`;
    return num(row.n);
  }
}

// --- flow control ---

/** Releases of held messages, written after the tick's messages (see PgQueuePromotions). */
export class PgFlowReleases implements TickPart {
  private wanted: Array<{ accountId: string; key: string; count: number; nowMs: number }> = [];
  private taken: typeof this.wanted = [];
  onReleased: ((earliestDue: number) => void) | null = null;

  constructor(private readonly messages: PgMessageStore) {}

  request(accountId: string, key: string, count: number, nowMs: number): void {
    this.wanted.push({ accountId, key, count, nowMs });
  }
  /** Held messages of the key this tick releases: its claim, preloaded before the writes, cannot see them. */
  pending(accountId: string, key: string): number {
    let n = 0;
    for (const w of this.wanted) if (w.key === key && w.accountId === accountId) n += w.count;
    return n;
  }
  mark(): number {
    return this.wanted.length;
  }
  rollback(mark: number): void {
    this.wanted.length = mark;
  }
  async apply(tx: Tx): Promise<void> {
    this.taken = this.wanted;
    this.wanted = [];
    if (this.taken.length === 0) return;
    const byKey = new Map<string, { accountId: string; key: string; count: number }>();
    for (const w of this.taken) {
      const id = `${w.accountId}\u0000${w.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: w.accountId, key: w.key, count: 0 }).get(id)!;
      entry.count += w.count;
    }
    const list = [...byKey.values()];
    const nowMs = Math.max(...this.taken.map((w) => w.nowMs));
    const released = await tx`
      WITH want AS (SELECT * FROM unnest(${list.map((l) => l.accountId)}::text[], ${list.map((l) => l.key)}::text[], ${list.map((l) => l.count)}::int[]) AS w(account_id, key, n)),
      held AS (
        SELECT m.id, w.n, row_number() OVER (PARTITION BY m.account_id, m.flow_key ORDER BY m.seq) AS rn
        FROM messages m JOIN want w ON m.account_id = w.account_id AND m.flow_key = w.key WHERE m.state = 'HELD'
      )
      UPDATE messages m SET state = ${tx.unsafe(dueAgainStateSql("m"))}, dispatch_at = LEAST(m.created_at, ${nowMs}::bigint)
      FROM held h WHERE m.id = h.id AND h.rn <= h.n
      RETURNING m.id`;
    if (released.length > 0) {
      this.messages.noteDue(nowMs);
      this.onReleased?.(nowMs);
    }
  }
  finish(): void {
    this.taken = [];
  }
}

export class PgFlowStore implements FlowStorage {
  constructor(
    private readonly sql: SQL,
    private readonly messages: PgMessageStore,
    private readonly releases: PgFlowReleases,
  ) {}
  hold(id: string): void {
    this.messages.setDispatch(id, "HELD", null);
  }
  releaseHeld(accountId: string, key: string, count: number, nowMs: number): number {
    this.releases.request(accountId, key, count, nowMs);
    return count;
  }
  unseenReleases(accountId: string, key: string): number {
    return this.releases.pending(accountId, key);
  }
  /** Held messages are released when their partition is taken over (see cluster.ts), not at start. */
  releaseAll(_nowMs: number): number {
    return 0;
  }
  async heldCount(accountId: string, key: string): Promise<number> {
    const [row] = await this.sql`SELECT count(*) AS n FROM messages WHERE account_id = ${accountId} AND flow_key = ${key} AND state = 'HELD'`;
    return num(row.n);
  }
  async keys(accountId: string): Promise<string[]> {
    const rows = await this.sql`SELECT DISTINCT flow_key AS key FROM messages WHERE account_id = ${accountId} AND flow_key IS NOT NULL ORDER BY flow_key`;
    return rows.map((r: Raw) => r.key as string);
  }
  async latestLimits(accountId: string, key: string): Promise<FlowControl | undefined> {
    const [row] = await this.sql`SELECT extra FROM messages WHERE account_id = ${accountId} AND flow_key = ${key} ORDER BY seq DESC LIMIT 1`;
    return row ? (JSON.parse(row.extra as string) as { flow?: FlowControl }).flow : undefined;
  }
}

interface FlowKeyRow extends Raw {
  account_id: string;
  key: string;
  paused: number;
  pinned_parallelism: number | null;
  pinned_rate: number | null;
  pinned_period_ms: number | null;
  window_start: number | null;
}

interface RateStartRow extends Raw {
  id: string;
  account_id: string;
  key: string;
  started_at: number;
  counts_until: number;
}

let startCounter = 0;

/** Flow-control keys' settings and rate windows, kept in memory on every node. */
export class PgFlowKeyStore implements FlowKeyStorage {
  constructor(
    readonly keysTable: CachedTable<FlowKeyRow>,
    readonly startsTable: CachedTable<RateStartRow>,
  ) {}
  all(): Array<{ accountId: string; key: string; settings: KeySettings }> {
    return this.keysTable.all().map((r) => ({
      accountId: r.account_id,
      key: r.key,
      settings: {
        paused: r.paused === 1,
        pins: { parallelism: r.pinned_parallelism ?? undefined, rate: r.pinned_rate ?? undefined, periodMs: r.pinned_period_ms ?? undefined },
        windowStart: r.window_start ?? undefined,
      },
    }));
  }
  save(accountId: string, key: string, s: KeySettings): void {
    this.keysTable.put(keyRowOf(accountId, key, s));
  }
  addStart(accountId: string, key: string, startedAt: number, countsUntil: number, nowMs: number): void {
    for (const r of this.startsTable.where((r) => r.account_id === accountId && r.key === key && r.counts_until <= nowMs)) this.startsTable.remove(r.id);
    this.startsTable.put({ id: `${startedAt}-${process.pid}-${startCounter++}`, account_id: accountId, key, started_at: startedAt, counts_until: countsUntil });
  }
  clearStarts(accountId: string, key: string): void {
    for (const r of this.startsTable.where((r) => r.account_id === accountId && r.key === key)) this.startsTable.remove(r.id);
  }
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }> {
    const byKey = new Map<string, { accountId: string; key: string; starts: number[] }>();
    for (const r of this.startsTable.where((r) => r.counts_until > nowMs).sort((a, b) => a.started_at - b.started_at)) {
      const id = `${r.account_id}/${r.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: r.account_id, key: r.key, starts: [] }).get(id)!;
      entry.starts.push(r.started_at);
    }
    return [...byKey.values()];
  }
  deleteAccount(accountId: string): void {
    for (const r of this.keysTable.where((r) => r.account_id === accountId)) this.keysTable.remove(this.keysTable.keyOf(r));
    this.clearAccountStarts(accountId);
  }
  private clearAccountStarts(accountId: string) {
    for (const r of this.startsTable.where((r) => r.account_id === accountId)) this.startsTable.remove(r.id);
  }
}

// --- management indexes ---

export class PgIndexStore<Row extends IndexRowBase> implements IndexStorage<Row> {
  constructor(readonly table: CachedTable<Row & Raw>) {}
  list(accountId: string): Row[] {
    return this.table.where((r) => r.account_id === accountId).sort((a, b) => a.creation_time - b.creation_time);
  }
  get(accountId: string, id: string): Row | null {
    const row = this.table.get(id);
    return row && row.account_id === accountId ? row : null;
  }
  byId(id: string): Row | null {
    return this.table.get(id) ?? null;
  }
  idByName(accountId: string, name: string): string | null {
    return this.table.where((r) => r.account_id === accountId && r.name === name)[0]?.id ?? null;
  }
  upsert(row: Row): void {
    this.table.put({ ...row } as Row & Raw);
  }
  rename(accountId: string, id: string, name: string): boolean {
    const row = this.get(accountId, id);
    if (row) this.table.put({ ...row, name } as Row & Raw);
    return row !== null;
  }
  setTokens(accountId: string, id: string, token: string, readOnlyToken: string): boolean {
    const row = this.get(accountId, id);
    if (row) this.table.put({ ...row, token, read_only_token: readOnlyToken } as Row & Raw);
    return row !== null;
  }
  delete(accountId: string, id: string): boolean {
    return this.get(accountId, id) !== null && this.table.remove(id);
  }
}

export class PgUsageLedger implements UsageFixtureLedgerStorage {
  constructor(readonly table: CachedTable<{ key: string; applied_at: number }>) {}
  seen(key: string): boolean {
    return this.table.get(key) !== undefined;
  }
  mark(key: string, nowMs: number): void {
    if (!this.seen(key)) this.table.put({ key, applied_at: nowMs });
  }
}

// --- the cached tables ---

export function cachedTables(sql: SQL) {
  return {
    accounts: new CachedTable<AccountRow & Raw>(sql, "accounts", ["id"], (r) => r as AccountRow & Raw),
    groups: new CachedTable<UrlGroupRow & Raw>(sql, "url_groups", ["account_id", "name"], numbers(["created_at", "updated_at"])),
    endpoints: new CachedTable<EndpointFull & Raw>(sql, "url_group_endpoints", ["seq"], numbers(["seq"])),
    queues: new CachedTable<QueueRow & Raw>(sql, "queues", ["account_id", "name"], numbers(["created_at", "updated_at", "parallelism", "paused"])),
    flowKeys: new CachedTable<FlowKeyRow>(
      sql,
      "flow_keys",
      ["account_id", "key"],
      numbers(["paused", "pinned_parallelism", "pinned_rate", "pinned_period_ms", "window_start"]),
    ),
    rateStarts: new CachedTable<RateStartRow>(sql, "flow_rate_starts", ["id"], numbers(["started_at", "counts_until"])),
    search: new CachedTable<SearchIndexRow & Raw>(sql, "search_indexes", ["id"], (r) => decodeIndex(r)),
    vector: new CachedTable<VectorIndexRow & Raw>(sql, "vector_indexes", ["id"], (r) => decodeIndex(r)),
    ledger: new CachedTable<{ key: string; applied_at: number }>(sql, "vector_usage_fixtures", ["key"], numbers(["applied_at"])),
  };
}

/** Index rows: every column but the text ones is a number. */
function decodeIndex<R extends IndexRowBase>(raw: Raw): R & Raw {
  const row: Raw = {};
  for (const [k, v] of Object.entries(raw)) row[k] = typeof v === "string" && /^-?\d+$/.test(v) && !["id", "account_id", "name", "token", "read_only_token", "endpoint", "type", "region", "partner_email", "similarity_function"].includes(k) ? num(v) : v;
  return row as R & Raw;
}

export { bytes };
