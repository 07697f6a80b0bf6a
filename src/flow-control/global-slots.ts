import type { GlobalSlotsLayout } from "../model/flow-control.ts";

/**
 * The account-wide limit of concurrent flow-controlled deliveries (`GET /v2/globalParallelism`),
 * shared by every delivery worker through atomic counters. A worker takes a slot before a
 * flow-controlled delivery starts and gives it back when it ends; a lane that finds no free slot
 * waits until any worker gives one back.
 */
export class GlobalSlots {
  private counts: Int32Array | null = null;
  private accounts: GlobalSlotsLayout["accounts"] = {};
  private accountCount = 0;
  private worker = 0;
  /** Lanes waiting for a slot of an account (by account index), and whether a wake-up is armed. */
  private readonly waiters = new Map<number, Set<() => void>>();
  private readonly armed = new Set<number>();

  /**
   * Joins the shared counters as worker `worker`. What a previous thread with the same number
   * still held (it crashed mid-delivery) is given back first.
   */
  configure(layout: GlobalSlotsLayout, worker: number): void {
    this.counts = new Int32Array(layout.buffer);
    this.accounts = layout.accounts;
    this.accountCount = Object.keys(layout.accounts).length;
    this.worker = worker;
    for (let account = 0; account < this.accountCount; account++) {
      const held = Atomics.exchange(this.counts, this.share(account), 0);
      if (held > 0) this.release(account, held);
    }
  }

  /** Takes a slot of the account's limit; false when every slot is in use. */
  take(accountId: string): boolean {
    const a = this.accounts[accountId];
    if (!this.counts || !a) return true;
    for (;;) {
      const used = Atomics.load(this.counts, a.index);
      if (used >= a.max) return false;
      if (Atomics.compareExchange(this.counts, a.index, used, used + 1) === used) break;
    }
    Atomics.add(this.counts, this.share(a.index), 1);
    return true;
  }

  give(accountId: string): void {
    const a = this.accounts[accountId];
    if (!this.counts || !a) return;
    Atomics.sub(this.counts, this.share(a.index), 1);
    this.release(a.index, 1);
  }

  /** Calls `fn` once a slot of the account may be free (given back here or by another worker). */
  whenFree(accountId: string, fn: () => void): void {
    const a = this.accounts[accountId];
    if (!this.counts || !a) return fn();
    const waiting = this.waiters.get(a.index) ?? new Set();
    this.waiters.set(a.index, waiting.add(fn));
    if (this.armed.has(a.index)) return;
    const used = Atomics.load(this.counts, a.index);
    if (used < a.max) return queueMicrotask(() => this.wakeWaiters(a.index));
    this.armed.add(a.index);
    const wait = Atomics.waitAsync(this.counts, a.index, used);
    const woken = () => {
      this.armed.delete(a.index);
      this.wakeWaiters(a.index);
    };
    if (wait.async) void wait.value.then(woken);
    else queueMicrotask(woken);
  }

  private release(account: number, n: number): void {
    Atomics.sub(this.counts!, account, n);
    Atomics.notify(this.counts!, account);
    this.wakeWaiters(account);
  }

  private wakeWaiters(account: number): void {
    const waiting = this.waiters.get(account);
    if (!waiting?.size) return;
    this.waiters.delete(account);
    for (const fn of waiting) fn();
  }

  private share(account: number): number {
    return (1 + this.worker) * this.accountCount + account;
  }
}

/** The shared counters for `workers` delivery workers and these accounts' limits. */
export function globalSlotsLayout(workers: number, limits: Array<{ accountId: string; max: number }>): GlobalSlotsLayout {
  const buffer = new SharedArrayBuffer(4 * (1 + workers) * Math.max(1, limits.length));
  const accounts: GlobalSlotsLayout["accounts"] = {};
  limits.forEach(({ accountId, max }, index) => (accounts[accountId] = { index, max }));
  return { buffer, accounts };
}

/** Flow-controlled deliveries of the account running now, across every worker. */
export function globalSlotsInUse(layout: GlobalSlotsLayout, accountId: string): number {
  const a = layout.accounts[accountId];
  return a ? Atomics.load(new Int32Array(layout.buffer), a.index) : 0;
}
