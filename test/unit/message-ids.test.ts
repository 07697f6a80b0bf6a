import { expect, setSystemTime, test } from "bun:test";
import { newMessageId, randomBase58 } from "../../src/core/ids.ts";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const timeOf = (id: string) => [...id.slice(4, 12)].reduce((n, c) => n * 58 + BASE58.indexOf(c), 0);

test("a message id is msg_, its creation millisecond in 8 base58 characters, then 18 random ones", () => {
  try {
    for (const ms of [0, 1, 57, 58, 1_795_000_000_123, 58 ** 8 - 1]) {
      setSystemTime(new Date(ms));
      const id = newMessageId();
      expect(id).toMatch(/^msg_[1-9A-HJ-NP-Za-km-z]{26}$/);
      expect(timeOf(id)).toBe(ms);
    }
  } finally {
    setSystemTime();
  }
});

test("ids of one millisecond differ, and later ids sort after earlier ones", () => {
  try {
    setSystemTime(new Date(1_795_000_000_000));
    const first = Array.from({ length: 1000 }, newMessageId);
    // Other random text made between ids does not disturb the next id's time.
    randomBase58(40);
    setSystemTime(new Date(1_795_000_000_001));
    const second = Array.from({ length: 1000 }, newMessageId);
    expect(new Set([...first, ...second]).size).toBe(2000);
    expect(first.every((id) => timeOf(id) === 1_795_000_000_000)).toBe(true);
    expect(second.every((id) => timeOf(id) === 1_795_000_000_001)).toBe(true);
    expect(first.every((a) => second.every((b) => a < b))).toBe(true);
  } finally {
    setSystemTime();
  }
});
