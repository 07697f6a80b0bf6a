import type { SQL } from "bun";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import { MESSAGE_READS, type MessageCensus, type MessageStorage } from "../../messages/store.ts";
import { fromRow, toRow, type MessageRow } from "../../model/message-row.ts";
import { dueAgainStateSql, type MessageRecord, type MessageState } from "../../model/message.ts";
import type { Read } from "../../store/group-commit.ts";
import { Where } from "../../store/where.ts";
import { PARTITIONS } from "./schema.ts";
import type { TickPart, Tx } from "./tick.ts";
import { bytes, num, numOrNull, partitionOf, runShared } from "./values.ts";

type PgRow = Record<string, unknown>;

/** A message row as PostgreSQL returns it (BIGINT as text, BYTEA as a Buffer) → the shared row form. */
export function messageRowOf(r: PgRow): MessageRow {
  return {
    id: r.id as string,
    account_id: r.account_id as string,
    kind: r.kind as string,
    state: r.state as string,
    dispatch_at: numOrNull(r.dispatch_at),
    not_before: num(r.not_before),
    created_at: num(r.created_at),
    retried: num(r.retried),
    max_retries: num(r.max_retries),
    url: r.url as string,
    method: r.method as string,
    headers: r.headers as string,
    body: bytes(r.body),
    topic_name: (r.topic_name as string | null) ?? null,
    queue_name: (r.queue_name as string | null) ?? null,
    schedule_id: (r.schedule_id as string | null) ?? null,
    caller_ip: (r.caller_ip as string | null) ?? null,
    label: (r.label as string | null) ?? null,
    flow_key: (r.flow_key as string | null) ?? null,
    extra: r.extra as string,
  };
}

interface Patch {
  state: MessageState;
  dispatchAt: number | null;
  retried?: number;
}

type Change = { op: "insert"; m: MessageRecord; claimed: boolean } | { op: "patch"; id: string; patch: Patch } | { op: "delete"; id: string };

/** What the tick's claim took: handed out by `due`, given back in `apply` if a write did not use it. */
interface Claimed {
  m: MessageRecord;
  prevState: MessageState;
  prevAt: number;
  /** Insertion order: ties of `prevAt` go in it (FIFO of a key or a queue). */
  seq: number;
}

/**
 * The live messages on PostgreSQL. Inside a tick every read answers from what the tick preloaded
 * (locked FOR UPDATE) and what its earlier writes changed; `apply` writes the tick's changes as at
 * most one INSERT, one UPDATE and one DELETE. Claims record this node and the attempt number, so
 * an outcome of an attempt the leader handed back (this node presumed dead) no longer matches.
 */
export class PgMessageStore implements MessageStorage, TickPart {
  private changes: Change[] = [];
  private taken: Change[] = [];
  /** Rows preloaded for this tick, by id (null: looked for, not there). */
  private loaded = new Map<string, MessageRecord | null>();
  private found = new Map<string, Array<MessageRecord & { seq: number }>>();
  private claimed: Claimed[] = [];
  private dueCursor = 0;
  private heldClaims = new Set<string>();
  private accountIds = new Map<string, string[]>();
  /** The attempt number of every attempt this node holds (for the outcome's fence). */
  private readonly attempts = new Map<string, number>();
  /** The flow-control partition of each attempt this node holds that has one. */
  private readonly attemptParts = new Map<string, number>();
  /** The workflow run of each attempt this node holds that belongs to one. */
  private readonly attemptRuns = new Map<string, { accountId: string; runId: string }>();
  /** The workflow runs of the messages this tick's writes read (their writes read the runs too). */
  private tickRuns: Array<{ accountId: string; runId: string }> = [];
  /** The earliest dispatch time this tick wrote (the other nodes are told). */
  private tickDue: number | null = null;
  /** Claims the tick being committed handed out. */
  private tickClaims: string[] = [];
  private nextDue: number | null = null;
  /**
   * A tick failed: whether it committed is unknown when the connection broke during COMMIT, so
   * rows it claimed may be ACTIVE under this node with no attempt behind them. The next tick
   * reconciles (`releaseForgotten`); "running" until that tick's commit is confirmed.
   */
  private reconcile: "none" | "needed" | "running" = "none";
  /** When the tick being committed released forgotten claims: due then, on this node too. */
  private releasedAt: number | null = null;

  constructor(
    private readonly sql: SQL,
    private readonly node: string,
    /** The flow-control partitions this node delivers (all of them on a single node). */
    private readonly owned: () => number[],
    /** The server clock's time (what `dispatch_at` is measured in). */
    private readonly now: () => number,
  ) {}

  // --- writes (inside a tick) ---

  insert(m: MessageRecord): void {
    this.changes.push({ op: "insert", m: { ...m }, claimed: false });
    this.noteDue(m.dispatchAt);
  }

  claim(id: string): void {
    // Claimed by the preload already, unless the message was stored in this tick (claimStored).
    const inserted = this.insertedNow(id);
    if (!inserted) return;
    inserted.claimed = true;
    inserted.m.state = "ACTIVE";
    inserted.m.dispatchAt = null;
    this.attempts.set(id, 1);
    this.noteAttemptRun(inserted.m);
  }

  reschedule(id: string, state: MessageState, dispatchAt: number | null, retried: number): void {
    this.patch(id, { state, dispatchAt, retried });
  }

  setDispatch(id: string, state: MessageState, dispatchAt: number | null): void {
    this.patch(id, { state, dispatchAt });
  }

  delete(id: string): boolean {
    const present = this.current(id) !== null;
    // The attempt is forgotten once this is committed (finish): until then a retried outcome still matches it.
    this.changes.push({ op: "delete", id });
    return present;
  }

  // --- reads inside a tick ---

  get(accountId: string, id: string): MessageRecord | undefined {
    const m = this.current(id);
    return m && m.accountId === accountId ? m : undefined;
  }

  due(_nowMs: number, limit: number): MessageRecord[] {
    const out = this.claimed.slice(this.dueCursor, this.dueCursor + limit).map((c) => c.m);
    this.dueCursor += out.length;
    for (const m of out) {
      this.attempts.set(m.id, this.attemptOf(m));
      if (m.flow) this.attemptParts.set(m.id, partitionOf(m.accountId, m.flow.key, PARTITIONS));
      this.noteAttemptRun(m);
    }
    return out;
  }

  stillClaimed(id: string): boolean {
    return this.heldClaims.has(id) || this.insertedNow(id)?.claimed === true;
  }

  find(accountId: string, f: Filter, afterSeq: number | null, limit: number): Array<MessageRecord & { seq: number }> {
    const rows = this.found.get(filterKey(accountId, f, afterSeq)) ?? [];
    return rows.filter((m) => this.current(m.id) !== null).slice(0, limit);
  }

  deleteAccount(accountId: string): string[] {
    const ids = [...(this.accountIds.get(accountId) ?? []), ...this.insertedOf(accountId)];
    for (const id of ids) this.delete(id);
    this.changes.push({ op: "delete", id: `account:${accountId}` });
    return ids;
  }

  /** Nothing to recover here: the leader hands back what dead nodes held (see cluster.ts). */
  recoverInFlight(_nowMs: number): number {
    return 0;
  }

  nextDueAt(): number | null {
    return this.nextDue;
  }

  /** Partitions with an attempt of this node under way (never given to another node meanwhile). */
  busyPartitions(): Set<number> {
    return new Set(this.attemptParts.values());
  }

  /** The earliest dispatch time the tick being committed wrote, once. */
  takeTickDue(): number | null {
    const due = this.tickDue;
    this.tickDue = null;
    return due;
  }

  /** A message became due at `atMs` (written here, or by another node's notification). */
  noteDue(atMs: number | null | undefined): void {
    if (atMs === null || atMs === undefined) return;
    if (this.nextDue === null || atMs < this.nextDue) this.nextDue = atMs;
  }

  /** The workflow runs of the messages the tick's writes read by id or filter, or record outcomes of. */
  runsOfTick(): Array<{ accountId: string; runId: string }> {
    return this.tickRuns;
  }

  /** Loads more messages into the tick (a workflow run's list), skipping rows another transaction holds. */
  async loadMore(tx: Tx, ids: string[]): Promise<void> {
    const fresh = ids.filter((id) => !this.loaded.has(id));
    if (fresh.length === 0) return;
    const rows = await tx`SELECT * FROM messages WHERE id = ANY(${fresh}) FOR UPDATE SKIP LOCKED`;
    for (const id of fresh) this.loaded.set(id, null);
    for (const row of rows) this.loaded.set(row.id, fromRow(messageRowOf(row)));
  }

  private noteAttemptRun(m: MessageRecord): void {
    if (m.workflow) this.attemptRuns.set(m.id, { accountId: m.accountId, runId: m.workflow.runId });
  }

  // --- reads outside a tick ---

  async census(nowMs: number): Promise<MessageCensus> {
    const [r] = await this.sql`
      SELECT count(*) FILTER (WHERE dispatch_at <= ${nowMs}) AS due, count(*) FILTER (WHERE dispatch_at > ${nowMs}) AS delayed,
             count(*) FILTER (WHERE state = 'ACTIVE') AS active, count(*) AS total FROM messages`;
    return censusOf(r);
  }

  async accountCensus(accountId: string, nowMs: number): Promise<MessageCensus> {
    const [r] = await this.sql`
      SELECT count(*) FILTER (WHERE dispatch_at <= ${nowMs}) AS due, count(*) FILTER (WHERE dispatch_at > ${nowMs}) AS delayed,
             count(*) FILTER (WHERE state = 'ACTIVE') AS active, count(*) AS total FROM messages WHERE account_id = ${accountId}`;
    return censusOf(r);
  }

  async read(accountId: string, id: string): Promise<MessageRecord | undefined> {
    const [row] = await this.sql`SELECT * FROM messages WHERE id = ${id} AND account_id = ${accountId}`;
    return row ? fromRow(messageRowOf(row)) : undefined;
  }

  // --- the tick ---

  async preload(tx: Tx, reads: readonly Read[]): Promise<void> {
    if (this.reconcile !== "none") await this.releaseForgotten(tx);
    const ids = new Set<string>();
    for (const r of reads) {
      if (r.kind === MESSAGE_READS.messages) for (const id of (r as unknown as { ids: string[] }).ids) ids.add(id);
    }
    if (ids.size > 0) {
      const rows = await tx`SELECT * FROM messages WHERE id = ANY(${[...ids]}) FOR UPDATE`;
      for (const id of ids) this.loaded.set(id, null);
      for (const row of rows) this.loaded.set(row.id, fromRow(messageRowOf(row)));
    }
    for (const r of reads) {
      if (r.kind === MESSAGE_READS.filter) await this.preloadFilter(tx, r as never);
      else if (r.kind === MESSAGE_READS.account) await this.preloadAccount(tx, (r as unknown as { accountId: string }).accountId);
      else if (r.kind === MESSAGE_READS.claims) await this.preloadClaims(tx, (r as unknown as { ids: string[] }).ids);
    }
    // A message's events read its workflow run (an account's reset deletes, so it reads none).
    const runs = new Map<string, { accountId: string; runId: string }>();
    const deleted = new Set([...this.accountIds.values()].flat());
    for (const m of this.loaded.values()) if (m?.workflow && !deleted.has(m.id)) runs.set(`${m.accountId}\u0000${m.workflow.runId}`, { accountId: m.accountId, runId: m.workflow.runId });
    for (const id of this.heldClaims) {
      const run = this.attemptRuns.get(id);
      if (run) runs.set(`${run.accountId}\u0000${run.runId}`, run);
    }
    this.tickRuns = [...runs.values()];
    const due = reads.find((r) => r.kind === MESSAGE_READS.due) as { nowMs: number; limit: number } | undefined;
    if (due) await this.claimDue(tx, due.nowMs, due.limit);
  }

  private async preloadFilter(tx: Tx, r: { accountId: string; filter: Filter; afterSeq: number | null; limit: number }) {
    const { sql, params } = applyFilter(new Where("account_id", r.accountId), r.filter, { messageId: "id", time: "created_at" })
      .add("seq", ">", r.afterSeq ?? undefined)
      .select("messages", "seq", r.limit);
    const rows = await runShared<PgRow>(tx, `${sql} FOR UPDATE`, params);
    const list = rows.map((row) => Object.assign(fromRow(messageRowOf(row)), { seq: num(row.seq) }));
    for (const m of list) this.loaded.set(m.id, m);
    this.found.set(filterKey(r.accountId, r.filter, r.afterSeq), list);
  }

  private async preloadAccount(tx: Tx, accountId: string) {
    const rows = await tx`SELECT * FROM messages WHERE account_id = ${accountId} FOR UPDATE`;
    this.accountIds.set(accountId, rows.map((r: PgRow) => r.id as string));
    for (const row of rows) this.loaded.set(row.id, fromRow(messageRowOf(row)));
  }

  /** Which of these attempts this node still holds; locks them so no hand-back races the outcome. */
  private async preloadClaims(tx: Tx, ids: string[]) {
    const known = ids.filter((id) => this.attempts.has(id));
    if (known.length === 0) return;
    const rows = await tx`
      SELECT m.id FROM messages m JOIN unnest(${known}::text[], ${known.map((id) => this.attempts.get(id)!)}::int[]) AS c(id, attempt)
        ON m.id = c.id AND m.attempt = c.attempt
      WHERE m.claimed_by = ${this.node} FOR UPDATE OF m`;
    for (const r of rows) this.heldClaims.add(r.id as string);
    // Handed back, cancelled elsewhere, or recorded by a commit this node was told had failed: its
    // outcome is not recorded again, and its partition is no longer busy here.
    for (const id of known) if (!this.heldClaims.has(id)) this.forgetAttempt(id);
  }

  /**
   * Rows ACTIVE under this node that no attempt of it holds (claimed by a tick whose commit was
   * reported failed but went through) are due again, as a dead node's are: each claim is either
   * attempted and its outcome recorded, or released.
   */
  private async releaseForgotten(tx: Tx): Promise<void> {
    const ids = [...this.attempts.keys()];
    const numbers = [...this.attempts.values()];
    const nowMs = this.now();
    const rows = await tx`
      UPDATE messages
      SET state = ${tx.unsafe(dueAgainStateSql())}, dispatch_at = ${nowMs}, claimed_by = NULL
      WHERE claimed_by = ${this.node} AND state = 'ACTIVE'
        AND (id, attempt) NOT IN (SELECT * FROM unnest(${ids}::text[], ${numbers}::int[]))
      RETURNING id`;
    this.reconcile = "running";
    if (rows.length > 0) {
      this.noteDue(nowMs);
      this.noteTickDue(nowMs);
      this.releasedAt = nowMs;
    }
  }

  private async claimDue(tx: Tx, nowMs: number, limit: number) {
    const owned = this.owned();
    // Only while this node is registered: one presumed dead takes nothing until it registered again
    // (the leader hands back what unregistered nodes hold).
    const rows = await tx`
      UPDATE messages m SET state = 'ACTIVE', dispatch_at = NULL, claimed_by = ${this.node}, attempt = m.attempt + 1
      FROM (
        SELECT id, state AS prev_state, dispatch_at AS prev_at FROM messages
        WHERE dispatch_at <= ${nowMs} AND (part IS NULL OR part = ANY(${owned}::int[]))
          AND EXISTS (SELECT 1 FROM cluster_nodes WHERE node_id = ${this.node})
        ORDER BY dispatch_at, seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
      ) c
      WHERE m.id = c.id
      RETURNING m.*, c.prev_state, c.prev_at`;
    const claimed: Claimed[] = rows.map((row: PgRow) => {
      // The record as it was when it was due (the lifecycle's `claimed` event carries that).
      const m = fromRow(messageRowOf({ ...row, state: row.prev_state, dispatch_at: row.prev_at }));
      this.attempts.set(m.id, num(row.attempt));
      return { m, prevState: row.prev_state as MessageState, prevAt: num(row.prev_at), seq: num(row.seq) };
    });
    // RETURNING follows no order: the claim's own (due time, then insertion) is restored here.
    claimed.sort((a, b) => a.prevAt - b.prevAt || a.seq - b.seq);
    this.claimed = claimed;
    this.dueCursor = 0;
    const [next] = await tx`
      SELECT min(dispatch_at) AS t FROM messages
      WHERE dispatch_at IS NOT NULL AND (part IS NULL OR part = ANY(${owned}::int[]))`;
    this.nextDue = numOrNull(next?.t);
  }

  mark(): number {
    // Savepoint of the change list and of how far the claim was handed out.
    return this.changes.length * 1_000_000 + this.dueCursor;
  }

  rollback(mark: number): void {
    const length = Math.floor(mark / 1_000_000);
    this.changes.length = length;
    this.dueCursor = mark % 1_000_000;
  }

  async apply(tx: Tx): Promise<void> {
    // Claimed by the preload but used by no write (its write failed): due again as it was.
    const unused = this.claimed.slice(this.dueCursor);
    this.tickClaims = this.claimed.slice(0, this.dueCursor).map((c) => c.m.id);
    this.claimed = [];
    this.dueCursor = 0;
    for (const c of unused) {
      this.forgetAttempt(c.m.id);
      this.changes.push({ op: "patch", id: c.m.id, patch: { state: c.prevState, dispatchAt: c.prevAt } });
    }
    this.taken = this.changes;
    this.changes = [];
    const { inserts, patches, deletes, accounts } = collapse(this.taken);
    if (inserts.length > 0) {
      // The engine's own columns after the shared row's: the flow key's partition and the claim.
      const rows = inserts.map(({ m, claimed }) => ({
        ...toRow(m),
        part: m.flow ? partitionOf(m.accountId, m.flow.key, PARTITIONS) : null,
        claimed_by: claimed ? this.node : null,
        attempt: claimed ? 1 : 0,
      }));
      await tx`INSERT INTO messages ${tx(rows)}`;
      for (const { m } of inserts) this.noteTickDue(m.dispatchAt);
    }
    if (patches.size > 0) {
      const ids = [...patches.keys()];
      const p = [...patches.values()];
      await tx`
        UPDATE messages m SET state = u.state, dispatch_at = u.dispatch_at, retried = COALESCE(u.retried, m.retried), claimed_by = NULL
        FROM unnest(${ids}::text[], ${p.map((x) => x.state)}::text[], ${p.map((x) => x.dispatchAt)}::bigint[], ${p.map((x) => x.retried ?? null)}::int[])
          AS u(id, state, dispatch_at, retried)
        WHERE m.id = u.id`;
      for (const x of p) {
        this.noteDue(x.dispatchAt);
        this.noteTickDue(x.dispatchAt);
      }
    }
    if (deletes.length > 0) await tx`DELETE FROM messages WHERE id = ANY(${deletes})`;
    for (const accountId of accounts) await tx`DELETE FROM messages WHERE account_id = ${accountId}`;
  }

  needsFollowUp(): boolean {
    return this.reconcile !== "none";
  }

  /** When the committed tick released forgotten claims (the other nodes hear it; this one must too). */
  takeReleased(): number | null {
    const at = this.releasedAt;
    this.releasedAt = null;
    return at;
  }

  finish(committed: boolean): void {
    if (committed) {
      // Delivered, rescheduled, held, released or cancelled: those attempts are over.
      for (const c of this.taken) {
        if (c.op === "insert") {
          if (!c.claimed) this.forgetAttempt(c.m.id);
        } else this.forgetAttempt(c.id);
      }
      if (this.reconcile === "running") this.reconcile = "none";
    } else {
      // Claims of a tick that was rolled back are not this node's; if it committed after all (the
      // connection broke during COMMIT), the next tick releases them.
      for (const id of this.tickClaims) this.forgetAttempt(id);
      for (const c of this.taken) if (c.op === "insert" && c.claimed) this.forgetAttempt(c.m.id);
      this.reconcile = "needed";
      this.releasedAt = null;
    }
    this.tickClaims = [];
    this.taken = [];
    this.loaded.clear();
    this.found.clear();
    this.heldClaims.clear();
    this.accountIds.clear();
    this.tickRuns = [];
  }

  /** Forgets attempts of this node that are over (outcome recorded, or handed back). */
  forgetAttempt(id: string): void {
    this.attempts.delete(id);
    this.attemptParts.delete(id);
    this.attemptRuns.delete(id);
  }

  // --- helpers ---

  private noteTickDue(atMs: number | null): void {
    if (atMs !== null && (this.tickDue === null || atMs < this.tickDue)) this.tickDue = atMs;
  }

  private attemptOf(m: MessageRecord): number {
    return this.attempts.get(m.id) ?? 1;
  }

  private patch(id: string, patch: Patch): void {
    // Rescheduled, held or released: no attempt of this node holds it once this is committed (finish).
    const inserted = this.insertedNow(id);
    if (inserted) {
      inserted.m.state = patch.state;
      inserted.m.dispatchAt = patch.dispatchAt;
      if (patch.retried !== undefined) inserted.m.retried = patch.retried;
      inserted.claimed = false;
    } else this.changes.push({ op: "patch", id, patch });
    this.noteDue(patch.dispatchAt);
  }

  private insertedNow(id: string): { m: MessageRecord; claimed: boolean } | undefined {
    for (let i = this.changes.length - 1; i >= 0; i--) {
      const c = this.changes[i]!;
      if (c.op === "insert" && c.m.id === id) return c;
      if (c.op === "delete" && c.id === id) return undefined;
    }
    return undefined;
  }

  private insertedOf(accountId: string): string[] {
    const ids = new Set<string>();
    for (const c of this.changes) {
      if (c.op === "insert" && c.m.accountId === accountId) ids.add(c.m.id);
      else if (c.op === "delete") ids.delete(c.id);
    }
    return [...ids];
  }

  /** The message as this tick sees it (null: gone or never loaded). */
  private current(id: string): MessageRecord | null {
    let base: MessageRecord | null = this.loaded.get(id) ?? null;
    for (const c of this.changes) {
      if (c.op === "insert" && c.m.id === id) base = c.m;
      else if (c.op === "delete" && c.id === id) base = null;
      else if (c.op === "patch" && c.id === id && base)
        base = { ...base, state: c.patch.state, dispatchAt: c.patch.dispatchAt, retried: c.patch.retried ?? base.retried };
    }
    return base;
  }
}

function censusOf(r: PgRow): MessageCensus {
  const [due, delayed, active, total] = [num(r.due), num(r.delayed), num(r.active), num(r.total)];
  return { due, delayed, inFlight: active, waiting: total - due - delayed - active };
}

function filterKey(accountId: string, f: Filter, afterSeq: number | null): string {
  return JSON.stringify([accountId, f, afterSeq]);
}

/** The tick's change list as one INSERT (final state of new rows), one UPDATE and one DELETE. */
function collapse(changes: Change[]) {
  const inserts = new Map<string, { m: MessageRecord; claimed: boolean }>();
  const patches = new Map<string, Patch>();
  const deletes = new Set<string>();
  const accounts: string[] = [];
  for (const c of changes) {
    if (c.op === "insert") inserts.set(c.m.id, c);
    else if (c.op === "patch") {
      const before = patches.get(c.id);
      patches.set(c.id, { ...c.patch, retried: c.patch.retried ?? before?.retried });
    } else if (c.id.startsWith("account:")) accounts.push(c.id.slice("account:".length));
    else if (inserts.has(c.id)) inserts.delete(c.id);
    else {
      patches.delete(c.id);
      deletes.add(c.id);
    }
  }
  return { inserts: [...inserts.values()], patches, deletes: [...deletes], accounts };
}
