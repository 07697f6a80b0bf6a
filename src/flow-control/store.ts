import type { Database } from "bun:sqlite";
import { Type } from "@sinclair/typebox";
import { FlowControlJson } from "../model/columns.ts";
import { dueAgainState, dueAgainStateSql, type FlowControl } from "../model/message.ts";
import { jsonColumn } from "../store/json-column.ts";

const readFlow = jsonColumn("messages.extra", Type.Object({ flow: Type.Optional(FlowControlJson) }));

/** Flow control's view of the messages, as every engine keeps it. Counts and keys are read outside writes. */
export interface FlowStorage {
  /** Sets a claimed message aside (HELD: not dispatchable until released). */
  hold(id: string): void;
  /**
   * Makes the key's `count` oldest held messages due (as of their creation, so that they come
   * before the key's newer messages); returns how many (engines that release after the write may
   * answer an estimate).
   */
  releaseHeld(accountId: string, key: string, count: number, nowMs: number): number;
  /**
   * How many held messages of the key this tick released where its claim cannot see them yet (an
   * engine that releases after the tick's writes; at most an estimate). Until the next claim they
   * are due but not claimable: the gate keeps their room for them.
   */
  unseenReleases(accountId: string, key: string): number;
  /** At start: every held message is due again; returns how many. */
  releaseAll(nowMs: number): number;
  heldCount(accountId: string, key: string): number | Promise<number>;
  keys(accountId: string): string[] | Promise<string[]>;
  latestLimits(accountId: string, key: string): FlowControl | undefined | Promise<FlowControl | undefined>;
}

/** Statements over `messages` for flow control: holding and releasing a key's messages. */
export class FlowStore implements FlowStorage {
  private readonly holdStmt;
  private readonly oldestHeldStmt;
  private readonly releaseAllStmt;
  private readonly heldCountStmt;
  private readonly keysStmt;
  private readonly latestStmt;
  private readonly releaseStmt;

  constructor(db: Database) {
    this.holdStmt = db.prepare("UPDATE messages SET state = 'HELD', dispatch_at = NULL WHERE id = ?");
    this.oldestHeldStmt = db.prepare<{ id: string; retried: number }, [string, string, number]>(
      "SELECT id, retried FROM messages WHERE account_id = ? AND flow_key = ? AND state = 'HELD' ORDER BY rowid LIMIT ?",
    );
    // A released message is due since it was published (never later than now), not since its
    // release: the claim pass goes by due time, and a newer message of the key that is due but not
    // yet claimed must not pass it (the key's order would break).
    this.releaseAllStmt = db.prepare(
      `UPDATE messages SET state = ${dueAgainStateSql()}, dispatch_at = MIN(created_at, ?) WHERE state = 'HELD'`,
    );
    this.heldCountStmt = db.prepare<{ n: number }, [string, string]>(
      "SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND flow_key = ? AND state = 'HELD'",
    );
    this.keysStmt = db.prepare<{ key: string }, [string]>(
      "SELECT DISTINCT flow_key AS key FROM messages WHERE account_id = ? AND flow_key IS NOT NULL ORDER BY flow_key",
    );
    this.latestStmt = db.prepare<{ extra: string }, [string, string]>(
      "SELECT extra FROM messages WHERE account_id = ? AND flow_key = ? ORDER BY rowid DESC LIMIT 1",
    );
    this.releaseStmt = db.prepare("UPDATE messages SET state = ?, dispatch_at = MIN(created_at, ?) WHERE id = ?");
  }

  hold(id: string): void {
    this.holdStmt.run(id);
  }
  /** The key's `limit` oldest held messages. */
  oldestHeld(accountId: string, key: string, limit: number): Array<{ id: string; retried: number }> {
    return this.oldestHeldStmt.all(accountId, key, limit);
  }

  releaseHeld(accountId: string, key: string, count: number, nowMs: number): number {
    const next = this.oldestHeld(accountId, key, count);
    for (const m of next) this.releaseStmt.run(dueAgainState(m.retried), nowMs, m.id);
    return next.length;
  }
  /** Released inline: a claim later in the same transaction sees them due. */
  unseenReleases(): number {
    return 0;
  }
  /** Every held message is due again at `nowMs`; returns how many. */
  releaseAll(nowMs: number): number {
    return this.releaseAllStmt.run(nowMs).changes;
  }
  heldCount(accountId: string, key: string): number {
    return this.heldCountStmt.get(accountId, key)?.n ?? 0;
  }
  /** Keys of the account's live messages. */
  keys(accountId: string): string[] {
    return this.keysStmt.all(accountId).map((r) => r.key);
  }
  /** The limits carried by the key's most recent live message. */
  latestLimits(accountId: string, key: string): FlowControl | undefined {
    const row = this.latestStmt.get(accountId, key);
    return row ? readFlow(row.extra).flow : undefined;
  }
}
