import { expect, test } from "bun:test";
import { DlqIdSequence } from "../../src/core/ids.ts";

test("DLQ ids of one process count up within a millisecond and start again at the next", () => {
  const ids = new DlqIdSequence();
  expect([ids.next(5), ids.next(5), ids.next(5), ids.next(6)]).toEqual(["5-0", "5-1", "5-2", "6-0"]);
});

test("processes sharing a database never make the same DLQ id, even in the same millisecond", () => {
  const nodes = [0, 1, 2].map((n) => new DlqIdSequence(n, 1000));
  const made = nodes.flatMap((ids) => [ids.next(7), ids.next(7), ids.next(7)]);
  expect(new Set(made).size).toBe(9);
  expect(made.slice(0, 3)).toEqual(["7-0", "7-1000", "7-2000"]);
});
