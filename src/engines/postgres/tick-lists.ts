import type { WriteTx } from "../../store/transactor.ts";
import { writeOf } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";

/**
 * What writes of each tick in flight leave for their tick's end (rows written just before the
 * commit, set-based statements run after the writes), each entry with the write that left it: a
 * write undone alone (`rollback` to its mark, or `drop` once PostgreSQL refused it after it ended)
 * takes its entries away. Several ticks may be in flight: each has its own list.
 */
export class TickLists<T> {
  private readonly lists = new Map<TickTransaction, Array<{ write: number; seq: number; entry: T }>>();
  /** Numbers the entries in the order they were added: a mark is the next one (entries may be taken before a rollback). */
  private seq = 0;

  add(tx: WriteTx, entry: T): void {
    const write = writeOf(tx);
    const list = this.lists.get(write.tick) ?? this.lists.set(write.tick, []).get(write.tick)!;
    list.push({ write: write.number, seq: this.seq++, entry });
  }

  /** The entries the tick's writes left so far. */
  of(tick: TickTransaction): T[] {
    return (this.lists.get(tick) ?? []).map((e) => e.entry);
  }

  /** The tick's entries, taken away (its end). */
  take(tick: TickTransaction): T[] {
    return this.takeWithWrites(tick).map((e) => e.entry);
  }

  /** The tick's entries with the write that left each, taken away (its end). */
  takeWithWrites(tick: TickTransaction): Array<{ write: number; entry: T }> {
    const entries = this.lists.get(tick) ?? [];
    this.lists.delete(tick);
    return entries.map(({ write, entry }) => ({ write, entry }));
  }

  /** The entries of the tick's writes but `write`, with the write that left each, taken away. */
  takeOthers(tick: TickTransaction, write: number): Array<{ write: number; entry: T }> {
    const list = this.lists.get(tick);
    if (!list) return [];
    this.lists.set(tick, list.filter((e) => e.write === write));
    return list.filter((e) => e.write !== write).map(({ write, entry }) => ({ write, entry }));
  }

  /** The entries write `write` of the tick left, taken away. */
  takeOf(tick: TickTransaction, write: number): T[] {
    const list = this.lists.get(tick);
    if (!list) return [];
    const taken = list.filter((e) => e.write === write).map((e) => e.entry);
    this.lists.set(tick, list.filter((e) => e.write !== write));
    return taken;
  }

  mark(_tick: TickTransaction): number {
    return this.seq;
  }

  /** Takes away what was added since `mark` (what a write, or a part of one, that failed left). */
  rollback(tick: TickTransaction, mark: number): void {
    const list = this.lists.get(tick);
    if (list) this.lists.set(tick, list.filter((e) => e.seq < mark));
  }

  drop(tick: TickTransaction, write: number): void {
    const list = this.lists.get(tick);
    if (list) this.lists.set(tick, list.filter((e) => e.write !== write));
  }

  /** Forgets the tick (it ended). */
  forget(tick: TickTransaction): void {
    this.lists.delete(tick);
  }
}
