import { expect, test } from "bun:test";
import { createLogger } from "../../src/core/log.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

test("delivery log lines never show the credentials a destination URL carries", async () => {
  const lines: string[] = [];
  const logger = createLogger({ level: "info", format: "json", write: (line) => lines.push(line) });
  const s = await startTestServer({ logger });
  const rx = await startReceiver();
  try {
    const target = rx.url.replace("http://", "http://alice:hunter2@");
    const res = await s.api(`/v2/publish/${target}/private`, { method: "POST", body: "x" });
    expect(res.status).toBe(200);
    await rx.waitFor(1);
    const delivery = await waitUntil(() => lines.find((l) => l.includes('"msg":"delivery"')), { what: "the delivery log line" });
    expect(delivery).toContain("***@127.0.0.1");
    expect(lines.join("\n")).not.toContain("hunter2");
  } finally {
    rx.stop();
    await s.stop();
  }
});
