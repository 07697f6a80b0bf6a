/**
 * A first-in first-out list with O(1) push and shift. `Array.prototype.shift` moves every element,
 * which matters for a lane holding thousands of waiting jobs or start times.
 */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  peek(): T | undefined {
    return this.items[this.head];
  }
  last(): T | undefined {
    return this.items[this.items.length - 1];
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head] = undefined as T;
    this.head++;
    // Compact once the consumed prefix dominates, so memory follows the live length.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
  /** Removes the first item matching `test`; O(n), for the rare cancellation. */
  removeFirst(test: (item: T) => boolean): T | undefined {
    for (let i = this.head; i < this.items.length; i++) {
      if (test(this.items[i]!)) return this.items.splice(i, 1)[0];
    }
    return undefined;
  }
}
