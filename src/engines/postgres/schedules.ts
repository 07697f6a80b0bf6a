import type { SQL } from "bun";
import { SCHEDULE_READS, type ScheduleMessageState, type ScheduleRow, type ScheduleStorage } from "../../schedules/store.ts";
import type { Read } from "../../store/group-commit.ts";
import { CachedTable } from "./cached-table.ts";
import type { TickPart, Tx } from "./tick.ts";
import { bytes, num, numOrNull, rowOf, type RowCodec, str, strOrNull } from "./values.ts";

type Raw = Record<string, unknown>;

const SCHEDULE_COLUMNS: RowCodec<ScheduleRow> = {
  account_id: str,
  id: str,
  revision: num,
  created_at: num,
  cron: str,
  destination_kind: (v) => (v === "group" ? "group" : "url"),
  destination: str,
  headers: str,
  query: str,
  body: bytes,
  caller_ip: strOrNull,
  settings: str,
  paused: num,
  last_schedule_time: numOrNull,
  next_schedule_time: numOrNull,
  last_states: str,
};

/** A schedule as PostgreSQL returns it, as the store hands it out (the cached table reads rows through it too). */
export const scheduleRowOfPg = (r: Raw): ScheduleRow & Raw => rowOf(r, SCHEDULE_COLUMNS);

type Op =
  | { op: "upsert"; row: ScheduleRow }
  | { op: "delete"; accountId: string; id: string }
  | { op: "paused"; accountId: string; id: string; paused: boolean }
  | { op: "next"; accountId: string; id: string; revision: number; next: number | null }
  | { op: "trigger"; accountId: string; id: string; revision: number; last: number; next: number | null; states: string }
  | { op: "state"; accountId: string; id: string; messageId: string; state: ScheduleMessageState }
  | { op: "account"; accountId: string };

/**
 * Schedules on PostgreSQL. Every node keeps the definitions in memory (its scheduler arms a timer
 * for each) and reloads them when another node changes one; listings read PostgreSQL, so the
 * states of the last trigger's messages are the same from every node. A trigger fires once per
 * slot across nodes: before the trigger's write runs, its node moves the schedule's next run time
 * from the slot to the next one with a conditional UPDATE; only the node whose UPDATE matched
 * publishes, in the same transaction.
 */
export class PgScheduleStore implements ScheduleStorage, TickPart {
  private ops: Op[] = [];
  private taken: Op[] = [];
  private triggers = new Set<string>();

  constructor(
    private readonly sql: SQL,
    readonly table: CachedTable<ScheduleRow & Raw>,
  ) {}

  private key(accountId: string, id: string) {
    return `${accountId}\u0000${id}`;
  }

  get(accountId: string, id: string): ScheduleRow | undefined {
    return this.table.get(this.key(accountId, id));
  }
  list(accountId: string): ScheduleRow[] {
    return this.table.where((r) => r.account_id === accountId).sort(byCreation);
  }
  all(): ScheduleRow[] {
    return this.table.all();
  }
  count(accountId: string): number {
    return this.table.where((r) => r.account_id === accountId).length;
  }

  async readList(accountId: string): Promise<ScheduleRow[]> {
    const rows = await this.sql`SELECT * FROM schedules WHERE account_id = ${accountId} ORDER BY created_at, id`;
    return rows.map(scheduleRowOfPg);
  }
  async read(accountId: string, id: string): Promise<ScheduleRow | undefined> {
    const [row] = await this.sql`SELECT * FROM schedules WHERE account_id = ${accountId} AND id = ${id}`;
    return row ? scheduleRowOfPg(row) : undefined;
  }

  upsert(row: ScheduleRow): void {
    this.table.put({ ...row } as ScheduleRow & Raw);
    this.ops.push({ op: "upsert", row });
  }
  delete(accountId: string, id: string): boolean {
    this.ops.push({ op: "delete", accountId, id });
    return this.table.remove(this.key(accountId, id));
  }
  setPaused(accountId: string, id: string, paused: boolean): boolean {
    const row = this.get(accountId, id);
    if (!row) return false;
    this.table.put({ ...row, paused: paused ? 1 : 0 } as ScheduleRow & Raw);
    this.ops.push({ op: "paused", accountId, id, paused });
    return true;
  }
  setNext(accountId: string, id: string, revision: number, next: number | null): void {
    const row = this.get(accountId, id);
    if (row?.revision === revision) this.table.put({ ...row, next_schedule_time: next } as ScheduleRow & Raw);
    this.ops.push({ op: "next", accountId, id, revision, next });
  }
  recordTrigger(accountId: string, id: string, revision: number, last: number, next: number | null, states: string): void {
    const row = this.get(accountId, id);
    if (row?.revision === revision)
      this.table.put({ ...row, last_schedule_time: last, next_schedule_time: next, last_states: states } as ScheduleRow & Raw);
    this.ops.push({ op: "trigger", accountId, id, revision, last, next, states });
  }
  setMessageState(accountId: string, scheduleId: string, messageId: string, state: ScheduleMessageState): void {
    this.ops.push({ op: "state", accountId, id: scheduleId, messageId, state });
  }
  deleteAccount(accountId: string): void {
    for (const r of this.list(accountId)) this.table.remove(this.key(accountId, r.id));
    this.ops.push({ op: "account", accountId });
  }

  /** The tick being committed changed a definition (not only trigger states). */
  get changedInTick(): boolean {
    return this.taken.some((o) => o.op !== "state");
  }

  takeTrigger(accountId: string, id: string, revision: number, plannedAt: number): boolean {
    return this.triggers.has(`${this.key(accountId, id)}\u0000${revision}\u0000${plannedAt}`);
  }

  async preload(tx: Tx, reads: readonly Read[]): Promise<void> {
    for (const r of reads) {
      if (r.kind !== SCHEDULE_READS.trigger) continue;
      const t = r as unknown as { accountId: string; id: string; revision: number; plannedAt: number; next: number | null };
      const won = await tx`
        UPDATE schedules SET next_schedule_time = ${t.next}
        WHERE account_id = ${t.accountId} AND id = ${t.id} AND revision = ${t.revision} AND next_schedule_time = ${t.plannedAt}
        RETURNING id`;
      if (won.length > 0) this.triggers.add(`${this.key(t.accountId, t.id)}\u0000${t.revision}\u0000${t.plannedAt}`);
    }
  }

  mark(): number {
    return this.ops.length * 1_000_000 + this.table.mark();
  }
  rollback(mark: number): void {
    this.ops.length = Math.floor(mark / 1_000_000);
    this.table.rollback(mark % 1_000_000);
  }

  async apply(tx: Tx): Promise<void> {
    this.taken = this.ops;
    this.ops = [];
    // The in-memory copy's own changes are kept by finish; PostgreSQL gets targeted statements.
    this.table.takeChanges();
    for (const o of this.taken) {
      if (o.op === "upsert") {
        const row: Raw = o.row;
        const columns = Object.keys(row);
        await tx.unsafe(
          `INSERT INTO schedules (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})
           ON CONFLICT (account_id, id) DO UPDATE SET ${columns.filter((c) => c !== "account_id" && c !== "id").map((c) => `${c} = excluded.${c}`).join(", ")}`,
          columns.map((c) => row[c] ?? null),
        );
      } else if (o.op === "delete") await tx`DELETE FROM schedules WHERE account_id = ${o.accountId} AND id = ${o.id}`;
      else if (o.op === "paused") await tx`UPDATE schedules SET paused = ${o.paused ? 1 : 0} WHERE account_id = ${o.accountId} AND id = ${o.id}`;
      else if (o.op === "next")
        await tx`UPDATE schedules SET next_schedule_time = ${o.next} WHERE account_id = ${o.accountId} AND id = ${o.id} AND revision = ${o.revision}`;
      else if (o.op === "trigger")
        await tx`
          UPDATE schedules SET last_schedule_time = ${o.last}, next_schedule_time = ${o.next}, last_states = ${o.states}
          WHERE account_id = ${o.accountId} AND id = ${o.id} AND revision = ${o.revision}`;
      else if (o.op === "state")
        // Only a message of the last trigger is tracked.
        await tx`
          UPDATE schedules SET last_states = jsonb_set(last_states::jsonb, ARRAY[${o.messageId}], to_jsonb(${o.state}::text))::text
          WHERE account_id = ${o.accountId} AND id = ${o.id} AND (last_states::jsonb) ? ${o.messageId}`;
      else await tx`DELETE FROM schedules WHERE account_id = ${o.accountId}`;
    }
  }

  finish(committed: boolean): void {
    const definitions = this.taken.some((o) => o.op !== "state");
    this.taken = [];
    this.triggers.clear();
    if (!definitions) {
      // Only trigger states moved: the in-memory definitions did not change.
      this.table.finish(committed && false);
      return;
    }
    this.table.finish(committed);
  }
}


const byCreation = (a: ScheduleRow, b: ScheduleRow) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
