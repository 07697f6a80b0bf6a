import { expect, test } from "bun:test";
import { onFinished } from "../../src/model/events.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

test("a bug while recording one outcome neither loses the batch nor blocks the other outcomes", async () => {
  // A listener that throws for one message simulates a bug in recording its outcome.
  const s = await startTestServer({
    messageListeners: [
      onFinished((_tx, m) => {
        if (m.url.endsWith("/poison")) throw new Error("boom");
      }),
    ],
  });
  const rx = await startReceiver();
  try {
    const publish = async (path: string) =>
      ((await (await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: path })).json()) as { messageId: string }).messageId;
    const ids = await Promise.all(["/a", "/poison", "/b", "/c", "/d"].map(publish));
    await rx.waitFor(5);
    const states = async (id: string) =>
      ((await (await s.api(`/v2/logs?messageId=${id}`)).json()) as { logs: Array<{ state: string }> }).logs.map((l) => l.state);
    for (const [i, id] of ids.entries()) {
      if (i === 1) continue;
      await waitUntil(async () => (await states(id))[0] === "DELIVERED", { what: `DELIVERED for message ${i}` });
    }
    // The faulty one was rolled back: still ACTIVE (delivered again at the next start), never DELIVERED.
    expect(await states(ids[1]!)).not.toContain("DELIVERED");
    expect((await s.api(`/v2/messages/${ids[1]}`)).status).toBe(200);
    expect(s.server.messaging.dispatcher.isInFlight(ids[1]!)).toBe(false);
  } finally {
    rx.stop();
    await s.stop();
  }
});
