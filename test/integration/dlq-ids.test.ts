import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

test("a manual clock restarted at the same instant still gives every failure its own DLQ id", async () => {
  const dir = mkdtempSync(join(tmpdir(), "svcd-dlqid-"));
  const dbPath = join(dir, "svcd.sqlite");
  const rx = await startReceiver(() => new Response("no", { status: 500 }));
  const start = Date.UTC(2026, 5, 1);
  try {
    const ids: string[] = [];
    for (let run = 0; run < 2; run++) {
      const s = await startTestServer({ clock: new ManualClock(start), config: { dbPath } });
      await s.api(`/v2/publish/${rx.url}/fail`, { method: "POST", body: String(run), headers: { "Svc-Retries": "0" } });
      const entries = await waitUntil(async () => {
        const list = ((await (await s.api("/v2/dlq")).json()) as { messages: Array<{ dlqId: string }> }).messages;
        return list.length === run + 1 ? list : undefined;
      }, { what: `DLQ entry of run ${run}` });
      ids.push(entries[0]!.dlqId);
      await s.stop();
    }
    expect(ids[0]).toBe(`${start}-0`);
    expect(ids[1]).toBe(`${start}-1`);
  } finally {
    rx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
