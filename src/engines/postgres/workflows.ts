import type { SQL } from "bun";
import type { Read } from "../../store/group-commit.ts";
import type { RunRecord, StepDeliveryState, StepDetails, StepEntry, StepError, Waiter } from "../../workflows/model.ts";
import {
  errorsByMessage,
  runListQuery,
  runRowOf,
  stepRowOf,
  toRun,
  toStep,
  toWaiter,
  waiterRowOf,
  type ErrorRow,
  type RunRow,
  type StepRow,
  type StoredWaiter,
  type WaiterRow,
} from "../../workflows/run-rows.ts";
import { RUN_READS, type RunFilter, type RunReadOptions, type RunStorage } from "../../workflows/store.ts";
import { WAIT_READS, type WaitStorage } from "../../workflows/wait-store.ts";
import type { TickPart, Tx } from "./tick.ts";
import { bytes, num, numOrNull, rowOf, type RowCodec, runShared, str, strOrNull } from "./values.ts";

type Raw = Record<string, unknown>;
type RunRef = { accountId: string; runId: string };

const keyOf = (accountId: string, runId: string) => `${accountId}\u0000${runId}`;

const RUN_COLUMNS: RowCodec<RunRow> = {
  seq: num,
  account_id: str,
  run_id: str,
  url: str,
  created_at: num,
  state: str,
  completed_at: numOrNull,
  label: strOrNull,
  caller_ip: strOrNull,
  flow_key: strOrNull,
  dlq_id: strOrNull,
  result: strOrNull,
  data: str,
  unsettled: num,
};
const STEP_COLUMNS: RowCodec<StepRow> = {
  account_id: str,
  run_id: str,
  position: num,
  message_id: str,
  call_type: str,
  url: str,
  method: str,
  body: bytes,
  created_at: num,
  headers: str,
  retries: num,
  retry_delay: strOrNull,
  state: str,
  next_delivery_at: numOrNull,
  details: strOrNull,
};
const WAITER_COLUMNS: RowCodec<WaiterRow> = {
  id: num,
  account_id: str,
  run_id: str,
  event_id: str,
  created_at: num,
  deadline: num,
  data: str,
};
const ERROR_COLUMNS: RowCodec<ErrorRow> = { message_id: str, time: num, status: num, error: str, body: str, headers: str };

const runRowOfPg = (r: Raw): RunRow => rowOf(r, RUN_COLUMNS);
const stepOfPg = (r: Raw): StepEntry => toStep(rowOf(r, STEP_COLUMNS));
const waiterOfPg = (r: Raw): StoredWaiter => toWaiter(rowOf(r, WAITER_COLUMNS));
const errorRowOfPg = (r: Raw): ErrorRow => rowOf(r, ERROR_COLUMNS);

/** A run as the tick loaded it: the row (null: looked for, absent), where its list goes on, its first entry, its whole list when asked for. */
interface LoadedRun {
  run: RunRecord | null;
  nextPosition: number;
  first?: StepEntry;
  steps?: StepEntry[];
}

type Change =
  | { op: "run"; run: RunRecord }
  | { op: "step"; entry: StepEntry }
  | { op: "retag"; ref: RunRef; position: number; messageId: string; headers: Array<[string, string]>; retries: number; retryDelayExpr?: string }
  | { op: "delivery"; ref: RunRef; messageId: string; state: StepDeliveryState; nextDeliveryAt?: number }
  | { op: "details"; ref: RunRef; messageId: string; details: StepDetails }
  | { op: "error"; ref: RunRef; messageId: string; e: StepError }
  | { op: "deleteRun"; ref: RunRef }
  | { op: "deleteAccountRuns"; accountId: string }
  | { op: "waiter"; id: number; waiter: Waiter }
  | { op: "dropWaiter"; id: number }
  | { op: "keep"; id: number; ref: RunRef; eventId: string; data: Uint8Array; createdAt: number }
  | { op: "takeKept"; id: number }
  | { op: "deleteRunWaits"; ref: RunRef }
  | { op: "deleteAccountWaits"; accountId: string };

const DELETES = new Set(["deleteRun", "deleteAccountRuns", "deleteRunWaits", "deleteAccountWaits"]);

/** What the message store tells this one: the runs of the messages the tick loaded, and loading more of them. */
export interface TickMessages {
  /** Runs of the messages the tick's writes read (by id, by filter, or as their attempts' outcomes). */
  runsOfTick(): RunRef[];
  /** Loads these messages too, skipping any another transaction holds (it acts on them itself). */
  loadMore(tx: Tx, ids: string[]): Promise<void>;
}

/**
 * The workflow layer's runs, step lists, waiters and kept events on PostgreSQL, one part of every
 * tick. A tick locks every run its writes read in one statement, in key order (runs before the
 * waiters and messages that belong to them, so two nodes never wait on each other in a circle):
 * the runs it declared, the runs of the messages it read, the runs of the waiters it takes, the
 * invokers of the runs it settles. The writes then read and change the in-memory view; `apply`
 * writes the tick's changes as a few statements. Runs never live in memory beyond a tick: every
 * node reads what the others committed.
 */
export class PgWorkflowStore implements TickPart {
  private changes: Change[] = [];
  private taken: Change[] = [];
  private runs = new Map<string, LoadedRun>();
  private waitersFound = new Map<string, StoredWaiter[]>();
  private dueFound: StoredWaiter[] | null = null;
  private keptFound = new Map<string, Array<{ id: number; data: Uint8Array }>>();
  /** Ids of waiters and kept events made in a tick, before PostgreSQL numbers them. */
  private tempIds = 0;
  readonly runStore: RunStorage;
  readonly waitStore: WaitStorage;

  constructor(
    private readonly sql: SQL,
    private readonly messages: TickMessages,
  ) {
    this.runStore = new PgRunStore(sql, this);
    this.waitStore = new PgWaitStore(sql, this);
  }

  /** The tick being committed stored waiters (the other nodes are told: a deadline may be theirs to fire). */
  get waitersChangedInTick(): boolean {
    return this.taken.some((c) => c.op === "waiter");
  }

  // --- the view inside a write ---

  record(change: Change): void {
    this.changes.push(change);
  }

  /** The run as the tick sees it now; throws for a run no read declared (a missing declaration is a bug, never a silent "absent"). */
  run(accountId: string, runId: string): RunRecord | undefined {
    const key = keyOf(accountId, runId);
    let run: RunRecord | null | undefined;
    for (const c of this.changes) {
      if (c.op === "run" && c.run.accountId === accountId && c.run.runId === runId) run = c.run;
      else if (this.deletes(c, accountId, runId, "runs")) run = null;
    }
    if (run === undefined) {
      const loaded = this.runs.get(key);
      if (!loaded) throw new Error(`workflow run ${runId} was read by a write that did not declare it`);
      run = loaded.run;
    }
    return run ? structuredClone(run) : undefined;
  }

  /** The run's list as the tick sees it (`all`: the whole list was loaded, else only what the tick knows). */
  steps(accountId: string, runId: string, all: boolean): StepEntry[] {
    const loaded = this.runs.get(keyOf(accountId, runId));
    if (all && !loaded?.steps && !this.insertedNow(accountId, runId))
      throw new Error(`the steps of workflow run ${runId} were read by a write that did not declare them`);
    let list: StepEntry[] = (loaded?.steps ?? (loaded?.first ? [loaded.first] : [])).map((e) => ({ ...e }));
    for (const c of this.changes) {
      if (this.deletes(c, accountId, runId, "runs")) list = [];
      else if (c.op === "step" && c.entry.accountId === accountId && c.entry.runId === runId) list.push({ ...c.entry });
      else if (c.op === "retag" && this.isRun(c.ref, accountId, runId)) {
        const e = list.find((s) => s.position === c.position);
        if (e) Object.assign(e, { messageId: c.messageId, headers: c.headers, retries: c.retries, retryDelayExpr: c.retryDelayExpr, state: "PENDING", nextDeliveryAt: undefined });
      } else if (c.op === "delivery" && this.isRun(c.ref, accountId, runId)) {
        for (const e of list) if (e.messageId === c.messageId) Object.assign(e, { state: c.state, nextDeliveryAt: c.nextDeliveryAt });
      } else if (c.op === "details" && this.isRun(c.ref, accountId, runId)) {
        for (const e of list) if (e.messageId === c.messageId) e.details = c.details;
      }
    }
    return list;
  }

  nextPosition(accountId: string, runId: string): number {
    const loaded = this.runs.get(keyOf(accountId, runId));
    if (!loaded && !this.insertedNow(accountId, runId)) throw new Error(`workflow run ${runId} was appended to by a write that did not declare it`);
    let next = loaded?.nextPosition ?? 0;
    for (const c of this.changes) {
      if (this.deletes(c, accountId, runId, "runs")) next = 0;
      else if (c.op === "step" && c.entry.accountId === accountId && c.entry.runId === runId) next = c.entry.position + 1;
    }
    return next;
  }

  waiting(accountId: string, eventId: string, runId?: string): StoredWaiter[] {
    const found = this.waitersFound.get(JSON.stringify([accountId, eventId, runId ?? null]));
    if (!found) throw new Error(`the waiters of event ${eventId} were read by a write that did not declare them`);
    return this.liveWaiters(found, (w) => w.accountId === accountId && w.eventId === eventId && (runId === undefined || w.runId === runId));
  }

  due(nowMs: number, limit: number): StoredWaiter[] {
    if (!this.dueFound) throw new Error("due waiters were read by a write that did not declare them");
    return this.liveWaiters(this.dueFound, (w) => w.deadline <= nowMs)
      .sort((a, b) => a.deadline - b.deadline)
      .slice(0, limit);
  }

  hasWaiter(id: number): boolean {
    const known = [...this.waitersFound.values(), this.dueFound ?? []].some((list) => list.some((w) => w.id === id));
    let present = known;
    for (const c of this.changes) {
      if (c.op === "waiter" && c.id === id) present = true;
      else if (c.op === "dropWaiter" && c.id === id) present = false;
    }
    return present;
  }

  takeKept(accountId: string, runId: string, eventId: string): Uint8Array | undefined {
    const found = this.keptFound.get(keyOf(accountId, runId) + `\u0000${eventId}`);
    if (!found) throw new Error(`events kept for workflow run ${runId} were read by a write that did not declare them`);
    let kept = [...found];
    for (const c of this.changes) {
      if (c.op === "keep" && this.isRun(c.ref, accountId, runId) && c.eventId === eventId) kept.push({ id: c.id, data: c.data });
      else if (c.op === "takeKept") kept = kept.filter((k) => k.id !== c.id);
      else if (this.deletes(c, accountId, runId, "waits")) kept = [];
    }
    const oldest = kept[0];
    if (oldest) this.record({ op: "takeKept", id: oldest.id });
    return oldest?.data;
  }

  newTempId(): number {
    return -++this.tempIds;
  }

  private liveWaiters(loaded: StoredWaiter[], matches: (w: StoredWaiter) => boolean): StoredWaiter[] {
    let list = loaded.filter(matches);
    for (const c of this.changes) {
      if (c.op === "waiter" && matches({ ...c.waiter, id: c.id })) list.push({ ...c.waiter, id: c.id });
      else if (c.op === "dropWaiter") list = list.filter((w) => w.id !== c.id);
      else if (c.op === "deleteRunWaits") list = list.filter((w) => !this.isRun(c.ref, w.accountId, w.runId));
      else if (c.op === "deleteAccountWaits") list = list.filter((w) => w.accountId !== c.accountId);
    }
    return list;
  }

  private insertedNow(accountId: string, runId: string): boolean {
    return this.changes.some((c) => c.op === "run" && c.run.accountId === accountId && c.run.runId === runId);
  }

  private isRun(ref: RunRef, accountId: string, runId: string): boolean {
    return ref.accountId === accountId && ref.runId === runId;
  }

  private deletes(c: Change, accountId: string, runId: string, what: "runs" | "waits"): boolean {
    if (what === "runs") return (c.op === "deleteRun" && this.isRun(c.ref, accountId, runId)) || (c.op === "deleteAccountRuns" && c.accountId === accountId);
    return (c.op === "deleteRunWaits" && this.isRun(c.ref, accountId, runId)) || (c.op === "deleteAccountWaits" && c.accountId === accountId);
  }

  // --- the tick ---

  async preload(tx: Tx, reads: readonly Read[]): Promise<void> {
    const wanted = new Map<string, RunRef & RunReadOptions>();
    const want = (ref: RunRef, opts: RunReadOptions = {}) => {
      const key = keyOf(ref.accountId, ref.runId);
      const had = wanted.get(key);
      wanted.set(key, { accountId: ref.accountId, runId: ref.runId, steps: had?.steps || opts.steps, settle: had?.settle || opts.settle });
    };
    const waiting: Array<{ accountId: string; eventId: string; runId?: string }> = [];
    const kept: Array<{ accountId: string; runId: string; eventId: string }> = [];
    let due = null as { nowMs: number; limit: number } | null;
    for (const r of reads) {
      if (r.kind === RUN_READS.runs) {
        const { accountId, runIds, steps, settle } = r as unknown as { accountId: string; runIds: string[] } & RunReadOptions;
        for (const runId of runIds) want({ accountId, runId }, { steps, settle });
      } else if (r.kind === WAIT_READS.waiting) waiting.push(r as never);
      else if (r.kind === WAIT_READS.kept) kept.push(r as never);
      else if (r.kind === WAIT_READS.due) due = r as never;
    }
    for (const ref of this.messages.runsOfTick()) want(ref);
    for (const k of kept) want(k);

    // What is found through other rows first, without locks: the runs of waiters, the invokers of runs settled.
    for (const w of waiting) {
      if (w.runId !== undefined) want({ accountId: w.accountId, runId: w.runId });
      const rows = await tx`
        SELECT DISTINCT run_id FROM workflow_waiters
        WHERE account_id = ${w.accountId} AND event_id = ${w.eventId} AND (${w.runId ?? null}::text IS NULL OR run_id = ${w.runId ?? null})`;
      for (const row of rows) want({ accountId: w.accountId, runId: row.run_id as string });
    }
    let dueIds: number[] = [];
    if (due) {
      const rows = await tx`SELECT id, account_id, run_id FROM workflow_waiters WHERE deadline <= ${due.nowMs} ORDER BY deadline, id LIMIT ${due.limit}`;
      dueIds = rows.map((row: Raw) => num(row.id));
      for (const row of rows) want({ accountId: row.account_id as string, runId: row.run_id as string });
    }
    const settled = [...wanted.values()].filter((w) => w.settle);
    if (settled.length > 0) {
      const rows = await tx`
        SELECT r.account_id, r.invoker_run_id FROM workflow_runs r
        JOIN unnest(${settled.map((w) => w.accountId)}::text[], ${settled.map((w) => w.runId)}::text[]) AS k(account_id, run_id)
          ON r.account_id = k.account_id AND r.run_id = k.run_id
        WHERE r.invoker_run_id IS NOT NULL`;
      for (const row of rows) want({ accountId: row.account_id as string, runId: row.invoker_run_id as string });
    }
    if (wanted.size > 0) await this.lockRuns(tx, [...wanted.values()]);

    // Then what belongs to the locked runs.
    for (const w of waiting) {
      const rows = await tx`
        SELECT * FROM workflow_waiters
        WHERE account_id = ${w.accountId} AND event_id = ${w.eventId} AND (${w.runId ?? null}::text IS NULL OR run_id = ${w.runId ?? null})
        ORDER BY id FOR UPDATE`;
      const list = rows.map(waiterOfPg).filter((x: StoredWaiter) => this.runs.has(keyOf(x.accountId, x.runId)));
      this.waitersFound.set(JSON.stringify([w.accountId, w.eventId, w.runId ?? null]), list);
    }
    if (due) {
      const rows = await tx`SELECT * FROM workflow_waiters WHERE id = ANY(${dueIds}::bigint[]) ORDER BY deadline, id FOR UPDATE SKIP LOCKED`;
      this.dueFound = rows.map(waiterOfPg);
    }
    for (const k of kept) {
      const rows = await tx`
        SELECT id, data FROM workflow_kept_events WHERE account_id = ${k.accountId} AND run_id = ${k.runId} AND event_id = ${k.eventId}
        ORDER BY id FOR UPDATE`;
      this.keptFound.set(keyOf(k.accountId, k.runId) + `\u0000${k.eventId}`, rows.map((row: Raw) => ({ id: num(row.id), data: bytes(row.data) })));
    }
    const live = [...wanted.values()].filter((w) => w.settle).flatMap((w) => this.runs.get(keyOf(w.accountId, w.runId))?.steps ?? []);
    if (live.length > 0) await this.messages.loadMore(tx, live.map((e) => e.messageId));
  }

  /** Locks the runs (one statement, in key order) and loads them with their first entry, or their whole list when asked. */
  private async lockRuns(tx: Tx, wanted: Array<RunRef & RunReadOptions>): Promise<void> {
    const accounts = wanted.map((w) => w.accountId);
    const runIds = wanted.map((w) => w.runId);
    const rows = await tx`
      SELECT r.* FROM workflow_runs r JOIN unnest(${accounts}::text[], ${runIds}::text[]) AS k(account_id, run_id)
        ON r.account_id = k.account_id AND r.run_id = k.run_id
      ORDER BY r.account_id, r.run_id
      FOR UPDATE OF r`;
    for (const w of wanted) this.runs.set(keyOf(w.accountId, w.runId), { run: null, nextPosition: 0 });
    for (const row of rows) {
      const run = toRun(runRowOfPg(row));
      this.runs.set(keyOf(run.accountId, run.runId), { run, nextPosition: 0 });
    }
    // Read after the locks (a statement of its own sees what the node that held a lock committed).
    const ends = await tx`
      SELECT s.account_id, s.run_id, max(s.position) + 1 AS next FROM workflow_steps s
      JOIN unnest(${accounts}::text[], ${runIds}::text[]) AS k(account_id, run_id) ON s.account_id = k.account_id AND s.run_id = k.run_id
      GROUP BY s.account_id, s.run_id`;
    for (const row of ends) this.runs.get(keyOf(row.account_id as string, row.run_id as string))!.nextPosition = num(row.next);
    const whole = wanted.filter((w) => w.steps || w.settle);
    const steps = await tx`
      SELECT s.* FROM workflow_steps s JOIN unnest(${accounts}::text[], ${runIds}::text[], ${wanted.map((w) => Boolean(w.steps || w.settle))}::boolean[])
        AS k(account_id, run_id, whole) ON s.account_id = k.account_id AND s.run_id = k.run_id
      WHERE s.position = 0 OR k.whole
      ORDER BY s.account_id, s.run_id, s.position`;
    for (const w of whole) this.runs.get(keyOf(w.accountId, w.runId))!.steps = [];
    for (const row of steps) {
      const entry = stepOfPg(row);
      const loaded = this.runs.get(keyOf(entry.accountId, entry.runId))!;
      if (entry.position === 0) loaded.first = entry;
      loaded.steps?.push(entry);
    }
  }

  mark(): number {
    return this.changes.length;
  }

  rollback(mark: number): void {
    this.changes.length = mark;
  }

  async apply(tx: Tx): Promise<void> {
    this.taken = this.changes;
    this.changes = [];
    // In order, in segments: what comes before a delete is written before it.
    let segment: Change[] = [];
    for (const c of this.taken) {
      if (!DELETES.has(c.op)) {
        segment.push(c);
        continue;
      }
      await writeSegment(tx, segment);
      segment = [];
      await deleteRows(tx, c);
    }
    await writeSegment(tx, segment);
  }

  finish(): void {
    this.taken = [];
    this.runs.clear();
    this.waitersFound.clear();
    this.keptFound.clear();
    this.dueFound = null;
  }
}

/** A segment's changes as a few multi-row statements: runs, new entries, updates of entries, errors, waiters, kept events. */
async function writeSegment(tx: Tx, changes: Change[]): Promise<void> {
  if (changes.length === 0) return;
  const runs = new Map<string, RunRecord>();
  const steps = new Map<string, StepEntry>();
  const stepKey = (accountId: string, runId: string, position: number) => `${keyOf(accountId, runId)}\u0000${position}`;
  const updates: Array<Extract<Change, { op: "retag" | "delivery" | "details" }>> = [];
  const errors: Array<Extract<Change, { op: "error" }>> = [];
  const waiters = new Map<number, Waiter>();
  const dropWaiters: number[] = [];
  const kept = new Map<number, Extract<Change, { op: "keep" }>>();
  const takeKept: number[] = [];
  for (const c of changes) {
    if (c.op === "run") runs.set(keyOf(c.run.accountId, c.run.runId), c.run);
    else if (c.op === "step") steps.set(stepKey(c.entry.accountId, c.entry.runId, c.entry.position), { ...c.entry });
    else if (c.op === "retag" || c.op === "delivery" || c.op === "details") {
      // An entry stored in this segment takes the change before it is written.
      const own = [...steps.values()].filter(
        (e) => e.accountId === c.ref.accountId && e.runId === c.ref.runId && (c.op === "retag" ? e.position === c.position : e.messageId === c.messageId),
      );
      if (own.length === 0) updates.push(c);
      for (const e of own) {
        if (c.op === "retag") Object.assign(e, { messageId: c.messageId, headers: c.headers, retries: c.retries, retryDelayExpr: c.retryDelayExpr, state: "PENDING", nextDeliveryAt: undefined });
        else if (c.op === "delivery") Object.assign(e, { state: c.state, nextDeliveryAt: c.nextDeliveryAt });
        else e.details = c.details;
      }
    } else if (c.op === "error") errors.push(c);
    else if (c.op === "waiter") waiters.set(c.id, c.waiter);
    else if (c.op === "dropWaiter") {
      if (!waiters.delete(c.id)) dropWaiters.push(c.id);
    } else if (c.op === "keep") kept.set(c.id, c);
    else if (c.op === "takeKept") {
      if (!kept.delete(c.id)) takeKept.push(c.id);
    }
  }
  if (runs.size > 0) {
    const rows = [...runs.values()].map(runRowOf);
    await tx`
      INSERT INTO workflow_runs ${tx(rows)}
      ON CONFLICT (account_id, run_id) DO UPDATE SET url = excluded.url, created_at = excluded.created_at, state = excluded.state,
        completed_at = excluded.completed_at, label = excluded.label, caller_ip = excluded.caller_ip, flow_key = excluded.flow_key,
        dlq_id = excluded.dlq_id, result = excluded.result, data = excluded.data, unsettled = excluded.unsettled, invoker_run_id = excluded.invoker_run_id`;
  }
  if (steps.size > 0) await tx`INSERT INTO workflow_steps ${tx([...steps.values()].map(stepRowOf))}`;
  for (const u of updates) {
    const { accountId, runId } = u.ref;
    if (u.op === "retag")
      await tx`
        UPDATE workflow_steps SET message_id = ${u.messageId}, headers = ${JSON.stringify(u.headers)}, retries = ${u.retries},
          retry_delay = ${u.retryDelayExpr ?? null}, state = 'PENDING', next_delivery_at = NULL
        WHERE account_id = ${accountId} AND run_id = ${runId} AND position = ${u.position}`;
  }
  // The last state of each message counts.
  const deliveries = new Map<string, Extract<Change, { op: "delivery" }>>();
  for (const u of updates) if (u.op === "delivery") deliveries.set(`${keyOf(u.ref.accountId, u.ref.runId)}\u0000${u.messageId}`, u);
  if (deliveries.size > 0) {
    const d = [...deliveries.values()];
    await tx`
      UPDATE workflow_steps s SET state = u.state, next_delivery_at = u.next_delivery_at
      FROM unnest(${d.map((x) => x.ref.accountId)}::text[], ${d.map((x) => x.ref.runId)}::text[], ${d.map((x) => x.messageId)}::text[],
        ${d.map((x) => x.state)}::text[], ${d.map((x) => x.nextDeliveryAt ?? null)}::bigint[]) AS u(account_id, run_id, message_id, state, next_delivery_at)
      WHERE s.account_id = u.account_id AND s.run_id = u.run_id AND s.message_id = u.message_id`;
  }
  for (const u of updates)
    if (u.op === "details")
      await tx`UPDATE workflow_steps SET details = ${JSON.stringify(u.details)} WHERE account_id = ${u.ref.accountId} AND run_id = ${u.ref.runId} AND message_id = ${u.messageId}`;
  if (errors.length > 0)
    await tx`INSERT INTO workflow_step_errors ${tx(
      errors.map((c) => ({
        account_id: c.ref.accountId,
        run_id: c.ref.runId,
        message_id: c.messageId,
        time: c.e.time,
        status: c.e.status,
        error: c.e.error,
        body: c.e.body,
        headers: JSON.stringify(c.e.headers),
      })),
    )}`;
  if (dropWaiters.length > 0) await tx`DELETE FROM workflow_waiters WHERE id = ANY(${dropWaiters}::bigint[])`;
  if (waiters.size > 0) await tx`INSERT INTO workflow_waiters ${tx([...waiters.values()].map(waiterRowOf))}`;
  if (takeKept.length > 0) await tx`DELETE FROM workflow_kept_events WHERE id = ANY(${takeKept}::bigint[])`;
  if (kept.size > 0)
    await tx`INSERT INTO workflow_kept_events ${tx(
      [...kept.values()].map((k) => ({ account_id: k.ref.accountId, run_id: k.ref.runId, event_id: k.eventId, created_at: k.createdAt, data: k.data })),
    )}`;
}

async function deleteRows(tx: Tx, c: Change): Promise<void> {
  if (c.op === "deleteRun") {
    const { accountId, runId } = c.ref;
    await tx`DELETE FROM workflow_step_errors WHERE account_id = ${accountId} AND run_id = ${runId}`;
    await tx`DELETE FROM workflow_steps WHERE account_id = ${accountId} AND run_id = ${runId}`;
    await tx`DELETE FROM workflow_runs WHERE account_id = ${accountId} AND run_id = ${runId}`;
  } else if (c.op === "deleteAccountRuns") {
    await tx`DELETE FROM workflow_step_errors WHERE account_id = ${c.accountId}`;
    await tx`DELETE FROM workflow_steps WHERE account_id = ${c.accountId}`;
    await tx`DELETE FROM workflow_runs WHERE account_id = ${c.accountId}`;
  } else if (c.op === "deleteRunWaits") {
    const { accountId, runId } = c.ref;
    await tx`DELETE FROM workflow_waiters WHERE account_id = ${accountId} AND run_id = ${runId}`;
    await tx`DELETE FROM workflow_kept_events WHERE account_id = ${accountId} AND run_id = ${runId}`;
  } else if (c.op === "deleteAccountWaits") {
    await tx`DELETE FROM workflow_waiters WHERE account_id = ${c.accountId}`;
    await tx`DELETE FROM workflow_kept_events WHERE account_id = ${c.accountId}`;
  }
}

/** Runs and step lists: writes go through the tick's view; reads outside writes query PostgreSQL. */
class PgRunStore implements RunStorage {
  constructor(
    private readonly sql: SQL,
    private readonly tick: PgWorkflowStore,
  ) {}

  insertRun(run: RunRecord): void {
    this.tick.record({ op: "run", run: structuredClone(run) });
  }
  saveRun(run: RunRecord): void {
    this.tick.record({ op: "run", run: structuredClone(run) });
  }
  getRun(accountId: string, runId: string): RunRecord | undefined {
    return this.tick.run(accountId, runId);
  }
  appendStep(entry: Omit<StepEntry, "position" | "state"> & { state?: StepDeliveryState }): number {
    const position = this.tick.nextPosition(entry.accountId, entry.runId);
    this.tick.record({ op: "step", entry: { ...entry, position, state: entry.state ?? "PENDING" } });
    return position;
  }
  firstStep(accountId: string, runId: string): StepEntry | undefined {
    return this.tick.steps(accountId, runId, false).find((e) => e.position === 0);
  }
  steps(accountId: string, runId: string): StepEntry[] {
    return this.tick.steps(accountId, runId, true);
  }
  stepOfMessage(accountId: string, runId: string, messageId: string): StepEntry | undefined {
    return this.steps(accountId, runId).find((e) => e.messageId === messageId);
  }
  retagStep(e: Pick<StepEntry, "accountId" | "runId" | "position" | "messageId" | "headers" | "retries" | "retryDelayExpr">): void {
    const { accountId, runId, position, messageId, headers, retries, retryDelayExpr } = e;
    this.tick.record({ op: "retag", ref: { accountId, runId }, position, messageId, headers, retries, retryDelayExpr });
  }
  setDelivery(accountId: string, runId: string, messageId: string, state: StepDeliveryState, nextDeliveryAt?: number): void {
    this.tick.record({ op: "delivery", ref: { accountId, runId }, messageId, state, nextDeliveryAt });
  }
  setDetails(accountId: string, runId: string, messageId: string, details: StepDetails): void {
    this.tick.record({ op: "details", ref: { accountId, runId }, messageId, details });
  }
  addError(accountId: string, runId: string, messageId: string, e: StepError): void {
    this.tick.record({ op: "error", ref: { accountId, runId }, messageId, e });
  }
  deleteRun(accountId: string, runId: string): void {
    this.tick.record({ op: "deleteRun", ref: { accountId, runId } });
  }
  deleteAccount(accountId: string): void {
    this.tick.record({ op: "deleteAccountRuns", accountId });
  }

  async readRun(accountId: string, runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.sql`SELECT * FROM workflow_runs WHERE account_id = ${accountId} AND run_id = ${runId}`;
    return row ? toRun(runRowOfPg(row)) : undefined;
  }
  async readSteps(accountId: string, runId: string, upTo?: number): Promise<StepEntry[]> {
    const rows = await this.sql`
      SELECT * FROM workflow_steps WHERE account_id = ${accountId} AND run_id = ${runId} AND (${upTo ?? null}::int IS NULL OR position <= ${upTo ?? null})
      ORDER BY position`;
    return rows.map(stepOfPg);
  }
  async readStepOfMessage(accountId: string, runId: string, messageId: string): Promise<StepEntry | undefined> {
    const [row] = await this.sql`
      SELECT * FROM workflow_steps WHERE message_id = ${messageId} AND account_id = ${accountId} AND run_id = ${runId} ORDER BY position LIMIT 1`;
    return row ? stepOfPg(row) : undefined;
  }
  async listRuns(accountId: string, f: RunFilter, beforeSeq: number | null, limit: number): Promise<RunRecord[]> {
    const { sql, params } = runListQuery(accountId, f, beforeSeq, limit);
    return (await runShared<Raw>(this.sql, sql, params)).map((r) => toRun(runRowOfPg(r)));
  }
  async unsettledRuns(limit: number): Promise<RunRecord[]> {
    const rows = await this.sql`SELECT * FROM workflow_runs WHERE unsettled = 1 LIMIT ${limit}`;
    return rows.map((r: Raw) => toRun(runRowOfPg(r)));
  }
  async errors(accountId: string, runId: string): Promise<Map<string, StepError[]>> {
    const rows = await this.sql`
      SELECT message_id, time, status, error, body, headers FROM workflow_step_errors WHERE account_id = ${accountId} AND run_id = ${runId} ORDER BY id`;
    return errorsByMessage(rows.map(errorRowOfPg));
  }
  async invokedBy(accountId: string, runId: string): Promise<RunRecord[]> {
    const rows = await this.sql`SELECT * FROM workflow_runs WHERE account_id = ${accountId} AND invoker_run_id = ${runId} ORDER BY seq`;
    return rows.map((r: Raw) => toRun(runRowOfPg(r)));
  }
  /** Runs that ended before `beforeMs` leave with their lists and errors, a bounded batch per call (the leader runs retention). */
  async prune(accountId: string, beforeMs: number, batch = 500): Promise<number> {
    return this.sql.begin(async (tx) => {
      const old = await tx`
        SELECT run_id FROM workflow_runs WHERE account_id = ${accountId} AND completed_at IS NOT NULL AND completed_at < ${beforeMs}
        LIMIT ${batch} FOR UPDATE SKIP LOCKED`;
      const ids = old.map((r: Raw) => r.run_id as string);
      if (ids.length === 0) return 0;
      await tx`DELETE FROM workflow_step_errors WHERE account_id = ${accountId} AND run_id = ANY(${ids}::text[])`;
      await tx`DELETE FROM workflow_steps WHERE account_id = ${accountId} AND run_id = ANY(${ids}::text[])`;
      await tx`DELETE FROM workflow_runs WHERE account_id = ${accountId} AND run_id = ANY(${ids}::text[])`;
      return ids.length;
    });
  }
}

/** Waiters and kept events: writes go through the tick's view; reads outside writes query PostgreSQL. */
class PgWaitStore implements WaitStorage {
  constructor(
    private readonly sql: SQL,
    private readonly tick: PgWorkflowStore,
  ) {}

  insert(w: Waiter): void {
    this.tick.record({ op: "waiter", id: this.tick.newTempId(), waiter: { ...w } });
  }
  waiting(accountId: string, eventId: string, runId?: string): StoredWaiter[] {
    return this.tick.waiting(accountId, eventId, runId);
  }
  delete(id: number): boolean {
    const present = this.tick.hasWaiter(id);
    if (present) this.tick.record({ op: "dropWaiter", id });
    return present;
  }
  due(nowMs: number, limit: number): StoredWaiter[] {
    return this.tick.due(nowMs, limit);
  }
  keep(accountId: string, runId: string, eventId: string, data: Uint8Array, nowMs: number): void {
    this.tick.record({ op: "keep", id: this.tick.newTempId(), ref: { accountId, runId }, eventId, data, createdAt: nowMs });
  }
  takeKept(accountId: string, runId: string, eventId: string): Uint8Array | undefined {
    return this.tick.takeKept(accountId, runId, eventId);
  }
  deleteRun(accountId: string, runId: string): void {
    this.tick.record({ op: "deleteRunWaits", ref: { accountId, runId } });
  }
  deleteAccount(accountId: string): void {
    this.tick.record({ op: "deleteAccountWaits", accountId });
  }

  async readWaiting(accountId: string, eventId: string): Promise<StoredWaiter[]> {
    const rows = await this.sql`SELECT * FROM workflow_waiters WHERE account_id = ${accountId} AND event_id = ${eventId} ORDER BY id`;
    return rows.map(waiterOfPg);
  }
  async ofRun(accountId: string, runId: string): Promise<StoredWaiter[]> {
    const rows = await this.sql`SELECT * FROM workflow_waiters WHERE account_id = ${accountId} AND run_id = ${runId}`;
    return rows.map(waiterOfPg);
  }
  async nextDeadline(): Promise<number | null> {
    const [row] = await this.sql`SELECT min(deadline) AS t FROM workflow_waiters`;
    return numOrNull(row?.t);
  }
}
