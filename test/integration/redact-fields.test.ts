/**
 * Redact-Fields (issue 24 item 1): a message published with `Upstash-Redact-Fields` (the SDKs'
 * `redact` option) / `Svc-Redact-Fields` is delivered with its real body and headers, and shown
 * with `REDACTED:<sha256 hex>` in their place wherever it is read back: the message, its log, its
 * DLQ entry, its schedule. A bad value is a 400 naming it.
 */
import { Client } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { advance, flush } from "../helpers/control.ts";
import { dlqEntryOf, waitForState } from "../helpers/inspect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { createLogger } from "../../src/core/log.ts";

const redacted = (value: string) => `REDACTED:${createHash("sha256").update(value).digest("hex")}`;
const SECRET_BODY = '{"card":"4111 1111 1111 1111"}';
const SECRET_AUTH = "Bearer very-secret";

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver((req) => new Response("ok", { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(() => rx.stop());

for (const dialect of ["svc", "upstash"] as const) {
  describe(`${dialect} dialect`, () => {
    let s: TestServer;
    const P = dialect === "svc" ? "Svc" : "Upstash";
    beforeAll(async () => {
      // Manual clock: a schedule fires when the test moves time on.
      s = await startTestServer({ config: { dialect, retryDelayScale: 0, clock: "manual" } });
    });
    afterAll(() => s.stop());

    const publish = async (path: string, fields: string, extra: Record<string, string> = {}) => {
      const res = await s.api(`/v2/publish/${rx.url}${path}`, {
        method: "POST",
        body: SECRET_BODY,
        headers: {
          "content-type": "application/json",
          [`${P}-Forward-Authorization`]: SECRET_AUTH,
          [`${P}-Forward-X-Tenant`]: "acme",
          [`${P}-Redact-Fields`]: fields,
          ...extra,
        },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { messageId: string }).messageId;
    };
    /** Every answer that reads the message back, as one text: the clear values must be absent. */
    const everything = async (...paths: string[]) => (await Promise.all(paths.map(async (p) => (await s.api(p)).text()))).join("\n");

    test("body and one header: the message shows them redacted, the delivery carries them", async () => {
      const id = await publish("/one", "body,header[Authorization]", { [`${P}-Delay`]: "1h" });
      const m = (await (await s.api(`/v2/messages/${id}`)).json()) as { body: string; header: Record<string, string[]> };
      expect(m.body).toBe(redacted(SECRET_BODY));
      expect(m.header.Authorization).toEqual([redacted(SECRET_AUTH)]);
      expect(m.header["X-Tenant"]).toEqual(["acme"]);
      const created = ((await (await s.api(`/v2/logs?messageId=${id}`)).json()) as { logs: Array<{ body: string; header: Record<string, string[]> }> }).logs.at(-1)!;
      expect(Buffer.from(created.body, "base64").toString()).toBe(redacted(SECRET_BODY));
      expect(created.header.Authorization).toEqual([redacted(SECRET_AUTH)]);
      const all = await everything(`/v2/messages/${id}`, `/v2/logs?messageId=${id}`, `/v2/events?messageId=${id}`);
      expect(all).not.toContain("very-secret");
      expect(all).not.toContain("4111");
    });

    test("a failed message: its log and DLQ entry stay redacted; a DLQ retry delivers the real values", async () => {
      const id = await publish("/fail/dlq", "body, header", { [`${P}-Retries`]: "0" });
      await waitForState(s, id, ["FAILED"]);
      const delivered = rx.received.find((r) => r.path === "/fail/dlq")!;
      expect(delivered.text).toBe(SECRET_BODY);
      expect(delivered.headers.get("authorization")).toBe(SECRET_AUTH);
      const entry = (await dlqEntryOf(s, id))!;
      expect(entry.body).toBe(redacted(SECRET_BODY));
      expect(entry.header["X-Tenant"]).toEqual([redacted("acme")]);
      expect(await everything(`/v2/dlq?messageId=${id}`, `/v2/dlq/${entry.dlqId}`, `/v2/logs?messageId=${id}`)).not.toContain("very-secret");

      rx.received.length = 0;
      const retried = await s.api(`/v2/dlq/retry/${entry.dlqId}`, { method: "POST" });
      const { messageId } = (await retried.json()) as { messageId: string };
      await waitForState(s, messageId, ["FAILED"]);
      const again = rx.received.find((r) => r.path === "/fail/dlq")!;
      expect(again.text).toBe(SECRET_BODY);
      expect((await dlqEntryOf(s, messageId))!.body).toBe(redacted(SECRET_BODY));
    });

    test("a schedule with Redact-Fields shows them redacted; its messages are delivered in the clear", async () => {
      const res = await s.api(`/v2/schedules/${rx.url}/scheduled`, {
        method: "POST",
        body: SECRET_BODY,
        headers: { [`${P}-Cron`]: "* * * * *", [`${P}-Forward-Authorization`]: SECRET_AUTH, [`${P}-Redact-Fields`]: "body,header[authorization]" },
      });
      expect(res.status).toBe(200);
      const { scheduleId } = (await res.json()) as { scheduleId: string };
      const view = (await (await s.api(`/v2/schedules/${scheduleId}`)).json()) as { body: string; header: Record<string, string[]> };
      expect(view.body).toBe(redacted(SECRET_BODY));
      expect(view.header.Authorization).toEqual([redacted(SECRET_AUTH)]);
      expect(await everything("/v2/schedules", `/v2/schedules/${scheduleId}`)).not.toContain("very-secret");

      await advance(s.api, { ms: 60_000 }, { flush: true });
      const fired = rx.received.find((r) => r.path === "/scheduled")!;
      expect({ body: fired.text, auth: fired.headers.get("authorization") }).toEqual({ body: SECRET_BODY, auth: SECRET_AUTH });
      const messageId = fired.headers.get(`${P}-Message-Id`)!;
      const logged = await everything(`/v2/logs?messageId=${messageId}`);
      expect(logged).toContain(Buffer.from(redacted(SECRET_BODY)).toString("base64"));
      expect(logged).not.toContain("very-secret");
    });

    test("a bad value is a 400 naming it; nothing is stored", async () => {
      for (const bad of ["bodies", "header[]", "header[Bad Name]", "body,cookies"]) {
        const res = await s.api(`/v2/publish/${rx.url}/bad`, { method: "POST", body: "x", headers: { [`${P}-Redact-Fields`]: bad } });
        expect(res.status).toBe(400);
        const { error } = (await res.json()) as { error: string };
        expect(error).toContain(`${P}-Redact-Fields`);
      }
      await flush(s.api);
      expect(rx.received.filter((r) => r.path === "/bad")).toEqual([]);
    });

    if (dialect === "upstash")
      test("the official client's redact option: publishJSON and schedules.create", async () => {
        const client = new Client({ baseUrl: s.url, token: s.token, retry: false });
        const { messageId } = await client.publishJSON({
          url: `${rx.url}/sdk`,
          body: { card: "4111 1111 1111 1111" },
          headers: { Authorization: SECRET_AUTH },
          delay: 3600,
          redact: { body: true, header: ["Authorization"] },
        });
        const m = await client.messages.get(messageId);
        expect(m.body).toBe(redacted(SECRET_BODY));
        expect(JSON.stringify(m)).not.toContain("very-secret");
        const { scheduleId } = await client.schedules.create({
          destination: `${rx.url}/sdk-schedule`,
          cron: "0 * * * *",
          body: "private",
          redact: { header: true, body: true },
          headers: { "X-Api-Key": "k-123" },
        });
        const schedule = await client.schedules.get(scheduleId);
        expect(schedule.body).toBe(redacted("private"));
        expect(JSON.stringify(schedule)).not.toContain("k-123");
      });
  });
}

test("redacted values never reach svcd's log lines (debug level) or its metrics", async () => {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", format: "json", write: (line) => lines.push(line) });
  const s = await startTestServer({ logger, config: { retryDelayScale: 0 } });
  try {
    const res = await s.api(`/v2/publish/${rx.url}/fail/logged`, {
      method: "POST",
      body: SECRET_BODY,
      headers: { "Svc-Forward-Authorization": SECRET_AUTH, "Svc-Redact-Fields": "body,header", "Svc-Retries": "0" },
    });
    const { messageId } = (await res.json()) as { messageId: string };
    await waitForState(s, messageId, ["FAILED"]);
    await waitUntil(() => lines.find((l) => l.includes("moved to the DLQ")), { what: "the DLQ log line" });
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.config.metricsToken}` } })).text();
    expect(metrics).toContain("svcd_");
    for (const text of [lines.join("\n"), metrics]) {
      expect(text).not.toContain("very-secret");
      expect(text).not.toContain("4111");
    }
  } finally {
    await s.stop();
  }
});
