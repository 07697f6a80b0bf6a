import type { SQL } from "bun";
import { DLQ_FILTER_COLUMNS, DLQ_READS, dlqRowOf, toEntry, type DlqRow, type DlqStorage } from "../../dlq/store.ts";
import type { DlqEntry } from "../../dlq/model.ts";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { Read } from "../../store/group-commit.ts";
import { Where } from "../../store/where.ts";
import type { TickPart, Tx } from "./tick.ts";
import { bytes, bytesOrNull, num, numOrNull, rowOf, type RowCodec, runShared, str, strOrNull } from "./values.ts";

const DLQ_COLUMNS: RowCodec<DlqRow> = {
  seq: num,
  dlq_id: str,
  failed_at: num,
  message: str,
  body: bytes,
  response_status: numOrNull,
  response_headers: strOrNull,
  response_body: bytesOrNull,
  error: strOrNull,
  workflow_created_at: numOrNull,
  failure_function_state: strOrNull,
};

const dlqRowOfPg = (r: Record<string, unknown>): DlqRow => rowOf(r, DLQ_COLUMNS);

type Change =
  | { insert: ReturnType<typeof dlqRowOf> }
  | { delete: string; accountId: string }
  | { deleteAccount: string }
  | { failureState: string; dlqId: string; accountId: string };

/**
 * The DLQ on PostgreSQL. Ids never collide across nodes (each node's sequence carries its own
 * prefix, see cluster ids), so no write needs to look them up first.
 */
export class PgDlqStore implements DlqStorage, TickPart {
  private changes: Change[] = [];
  private taken: Change[] = [];
  private loaded = new Map<string, DlqEntry | null>();
  private found = new Map<string, DlqEntry[]>();

  constructor(private readonly sql: SQL) {}

  insert(entry: Omit<DlqEntry, "seq">): void {
    this.changes.push({ insert: dlqRowOf(entry) });
  }

  get(accountId: string, dlqId: string): DlqEntry | undefined {
    if (this.deletedNow(dlqId)) return undefined;
    const e = this.loaded.get(dlqId);
    return e && e.message.accountId === accountId ? e : undefined;
  }

  /** Only an entry of this account that the write loaded (or stored) is deleted. */
  delete(accountId: string, dlqId: string): boolean {
    const present = this.get(accountId, dlqId) !== undefined || this.insertedNow(accountId, dlqId);
    if (present) this.changes.push({ delete: dlqId, accountId });
    return present;
  }

  private insertedNow(accountId: string, dlqId: string): boolean {
    return this.changes.some((c) => "insert" in c && c.insert.dlq_id === dlqId && c.insert.account_id === accountId) && !this.deletedNow(dlqId);
  }

  setFailureFunctionState(accountId: string, dlqId: string, state: string): void {
    this.changes.push({ failureState: state, dlqId, accountId });
  }

  exists(_dlqId: string): boolean {
    return false;
  }

  oldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): DlqEntry[] {
    return (this.found.get(JSON.stringify([accountId, f, afterSeq])) ?? []).filter((e) => !this.deletedNow(e.dlqId)).slice(0, limit);
  }

  deleteAccount(accountId: string): void {
    this.changes.push({ deleteAccount: accountId });
  }

  async read(accountId: string, dlqId: string): Promise<DlqEntry | undefined> {
    const [row] = await this.sql`SELECT * FROM dlq WHERE dlq_id = ${dlqId} AND account_id = ${accountId}`;
    return row ? toEntry(dlqRowOfPg(row)) : undefined;
  }

  async count(accountId: string): Promise<number> {
    const [row] = await this.sql`SELECT count(*) AS n FROM dlq WHERE account_id = ${accountId}`;
    return num(row.n);
  }

  async newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<DlqEntry[]> {
    const { sql, params } = this.where(accountId, f).add("seq", "<", beforeSeq ?? undefined).select("dlq", "seq DESC", limit);
    return (await runShared<Record<string, unknown>>(this.sql, sql, params)).map((r) => toEntry(dlqRowOfPg(r)));
  }

  async readOldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): Promise<DlqEntry[]> {
    const { sql, params } = this.where(accountId, f).add("seq", ">", afterSeq ?? undefined).select("dlq", "seq", limit);
    return (await runShared<Record<string, unknown>>(this.sql, sql, params)).map((r) => toEntry(dlqRowOfPg(r)));
  }

  async prune(accountId: string, beforeMs: number): Promise<number> {
    const rows = await this.sql`DELETE FROM dlq WHERE account_id = ${accountId} AND failed_at < ${beforeMs} RETURNING seq`;
    return rows.length;
  }

  async preload(tx: Tx, reads: readonly Read[]): Promise<void> {
    for (const r of reads) {
      if (r.kind === DLQ_READS.entries) {
        const { accountId, dlqIds } = r as unknown as { accountId: string; dlqIds: string[] };
        const rows = await tx`SELECT * FROM dlq WHERE account_id = ${accountId} AND dlq_id = ANY(${dlqIds}) FOR UPDATE`;
        for (const row of rows) this.loaded.set(row.dlq_id, toEntry(dlqRowOfPg(row)));
      } else if (r.kind === DLQ_READS.filter) {
        const { accountId, filter, afterSeq, limit } = r as unknown as { accountId: string; filter: Filter; afterSeq: number | null; limit: number };
        const { sql, params } = this.where(accountId, filter).add("seq", ">", afterSeq ?? undefined).select("dlq", "seq", limit);
        const entries = (await runShared<Record<string, unknown>>(tx, `${sql} FOR UPDATE`, params)).map((row) => toEntry(dlqRowOfPg(row)));
        for (const e of entries) this.loaded.set(e.dlqId, e);
        this.found.set(JSON.stringify([accountId, filter, afterSeq]), entries);
      }
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
    const inserts = new Map<string, ReturnType<typeof dlqRowOf>>();
    const deletes: Array<{ dlqId: string; accountId: string }> = [];
    for (const c of this.taken) {
      if ("insert" in c) inserts.set(c.insert.dlq_id, c.insert);
      else if ("delete" in c) {
        if (!inserts.delete(c.delete)) deletes.push({ dlqId: c.delete, accountId: c.accountId });
      } else if ("deleteAccount" in c) {
        for (const [id, row] of inserts) if (row.account_id === c.deleteAccount) inserts.delete(id);
        await tx`DELETE FROM dlq WHERE account_id = ${c.deleteAccount}`;
      }
    }
    if (deletes.length > 0)
      await tx`
        DELETE FROM dlq d USING unnest(${deletes.map((d) => d.dlqId)}::text[], ${deletes.map((d) => d.accountId)}::text[]) AS x(dlq_id, account_id)
        WHERE d.dlq_id = x.dlq_id AND d.account_id = x.account_id`;
    if (inserts.size > 0) await tx`INSERT INTO dlq ${tx([...inserts.values()])}`;
    for (const c of this.taken)
      if ("failureState" in c)
        await tx`UPDATE dlq SET failure_function_state = ${c.failureState} WHERE dlq_id = ${c.dlqId} AND account_id = ${c.accountId}`;
  }
  finish(): void {
    this.taken = [];
    this.loaded.clear();
    this.found.clear();
  }

  private deletedNow(dlqId: string): boolean {
    return this.changes.some((c) => "delete" in c && c.delete === dlqId);
  }

  private where(accountId: string, f: Filter): Where {
    return applyFilter(new Where("account_id", accountId), f, DLQ_FILTER_COLUMNS);
  }
}
