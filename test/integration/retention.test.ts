import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const DAY = 24 * 3600 * 1000;

test("DLQ entries and log entries are dropped after the plan's retention (payg: 7 days)", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const s = await startTestServer({ clock });
  const rx = await startReceiver(() => new Response("no", { status: 500 }));
  try {
    const res = await s.api(`/v2/publish/${rx.url}/fail`, { method: "POST", body: "x", headers: { "Svc-Retries": "0" } });
    const { messageId } = (await res.json()) as { messageId: string };
    const list = async () => ((await (await s.api("/v2/dlq")).json()) as { messages: unknown[] }).messages;
    await waitUntil(async () => (await list()).length === 1, { what: "the DLQ entry" });

    clock.advanceTo(clock.now() + 6 * DAY);
    expect(await list()).toHaveLength(1);
    const logs = async () => ((await (await s.api(`/v2/logs?messageId=${messageId}`)).json()) as { logs: unknown[] }).logs;
    expect((await logs()).length).toBeGreaterThan(0);

    clock.advanceTo(clock.now() + 1 * DAY + 11 * 60 * 1000);
    // One retention run drops both, one after the other (on PostgreSQL a round trip apart).
    await waitUntil(async () => (await list()).length === 0 && (await logs()).length === 0, { what: "the DLQ entry and the log entries to expire" });
  } finally {
    rx.stop();
    await s.stop();
  }
});
