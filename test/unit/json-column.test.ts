import { expect, test } from "bun:test";
import { HeaderPairs, MessageExtraJson } from "../../src/model/columns.ts";
import { fromRow, toRow } from "../../src/model/message-row.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import { jsonColumn, MalformedRowError } from "../../src/store/json-column.ts";

const message: MessageRecord = {
  id: "msg_1",
  accountId: "acct",
  kind: "message",
  state: "CREATED",
  dispatchAt: 5,
  notBefore: 5,
  createdAt: 1,
  retried: 0,
  maxRetries: 3,
  url: "http://example.com/",
  method: "POST",
  headers: [["Content-Type", "text/plain"]],
  body: new Uint8Array([1, 2]),
  timeoutMs: 1000,
  flow: { key: "k", periodMs: 1000, parallelism: 2 },
  callback: { url: "http://example.com/cb", method: "POST", headers: [] },
};

test("a message survives the trip through its row", () => {
  expect(fromRow(toRow(message))).toEqual({ ...message, labels: undefined } as MessageRecord);
});

test("a damaged JSON column fails at once, naming the column and what is wrong", () => {
  const row = toRow(message);
  expect(() => fromRow({ ...row, extra: "{" })).toThrow(new MalformedRowError("messages.extra: stored text is not JSON"));
  expect(() => fromRow({ ...row, extra: JSON.stringify({ timeoutMs: "soon" }) })).toThrow(
    "stored messages.extra.timeoutMs: must be a number",
  );
  expect(() => fromRow({ ...row, extra: JSON.stringify({ timeoutMs: 1, flow: { key: "k" } }) })).toThrow(
    "stored messages.extra.flow.periodMs: is required",
  );
  expect(() => fromRow({ ...row, headers: JSON.stringify([["a", 1]]) })).toThrow("stored messages.headers[0][1]: must be a string");
});

test("fields a column's schema does not name are kept as stored", () => {
  const read = jsonColumn("extra", MessageExtraJson);
  expect(read(JSON.stringify({ timeoutMs: 1, addedLater: { note: "r" } })) as unknown).toEqual({ timeoutMs: 1, addedLater: { note: "r" } });
  // A field it names is checked: a workflow mark without its call type is a damaged row.
  expect(() => read(JSON.stringify({ timeoutMs: 1, workflow: { runId: "r" } }))).toThrow(MalformedRowError);
  expect(jsonColumn("h", HeaderPairs)("[]")).toEqual([]);
});
