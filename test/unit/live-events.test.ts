import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { silentLogger } from "../../src/core/log.ts";
import { MessageEvents } from "../../src/model/events.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";
import { LiveEventStreams } from "../../src/telemetry/live-events.ts";

const message = (id: string, accountId = "acct"): MessageRecord => ({
  id,
  accountId,
  kind: "message",
  state: "CREATED",
  dispatchAt: 0,
  notBefore: 0,
  createdAt: 0,
  retried: 0,
  maxRetries: 3,
  url: "http://example.com/",
  method: "POST",
  headers: [],
  body: new Uint8Array(),
  timeoutMs: 1000,
});

function setup() {
  const commit = new GroupCommit(new Database(":memory:"));
  const events = new MessageEvents(silentLogger, []);
  return { commit, events, streams: new LiveEventStreams(events) };
}

/** Everything the stream holds now, as `event` names with their data. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, expectAtLeast: number) {
  const frames: Array<{ event: string; data: Record<string, unknown> }> = [];
  let text = "";
  while (frames.length < expectAtLeast) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    let end: number;
    while ((end = text.indexOf("\n\n")) >= 0) {
      const chunk = text.slice(0, end);
      text = text.slice(end + 2);
      const event = /^event: (.*)$/m.exec(chunk)?.[1];
      if (event) frames.push({ event, data: JSON.parse(/^data: (.*)$/m.exec(chunk)![1]!) });
    }
  }
  return frames;
}

test("a stream gets its account's committed events; when its reader leaves it is gone", async () => {
  const { commit, events, streams } = setup();
  const reader = streams.open("acct", { userId: "acct" }).body!.getReader();
  expect(streams.size).toBe(1);
  await commit.run(async (tx) => {
    await events.emit(tx, "created", { message: message("other", "someone-else"), atMs: 1 });
    await events.emit(tx, "created", { message: message("m1"), atMs: 2 });
  });
  const frames = await drain(reader, 2);
  expect(frames).toEqual([
    { event: "ready", data: { userId: "acct" } },
    { event: "created", data: { type: "created", messageId: "m1", url: "http://example.com/", atMs: 2 } },
  ]);
  await reader.cancel();
  expect(streams.size).toBe(0);
});

test("a reader that falls behind loses events and is told how many", async () => {
  const { commit, events, streams } = setup();
  const reader = streams.open("acct", {}).body!.getReader();
  const sent = 1500;
  await commit.run(async (tx) => {
    for (let i = 0; i < sent; i++) await events.emit(tx, "created", { message: message(`m${i}`), atMs: i });
  });
  // Reading one frame makes room for one more: the next event goes in, after a note of what was lost.
  const frames = await drain(reader, 1);
  await commit.run((tx) => events.emit(tx, "created", { message: message("after"), atMs: sent }));
  while (!frames.some((f) => f.data.messageId === "after")) frames.push(...(await drain(reader, 1)));
  const kept = frames.filter((f) => f.event === "created" && f.data.messageId !== "after").length;
  expect(kept).toBeLessThan(sent);
  expect(frames.at(-2)).toEqual({ event: "dropped", data: { dropped: sent - kept } });
  expect(frames.at(-1)!.data.messageId).toBe("after");
  await reader.cancel();
});
