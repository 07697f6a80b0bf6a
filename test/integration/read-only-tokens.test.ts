/**
 * Read-only tokens (issue 24 item 2): beside its token, each account has a read-only token that
 * reads everything the token reads and is refused with 403 wherever the token would publish,
 * change or delete. The official client with a read-only token reads, and gets a QstashError 403
 * on publish.
 */
import { Client, QstashError } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { account, jsonBody } from "../helpers/accounts.ts";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { parseCommandLine } from "../../src/config/config.ts";

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver(() => new Response("ok"));
});
afterAll(() => rx.stop());

for (const dialect of ["svc", "upstash"] as const) {
  describe(`${dialect} dialect`, () => {
    let s: TestServer;
    const P = dialect === "svc" ? "Svc" : "Upstash";
    const RO = `ro_${dialect}_token`;
    beforeAll(async () => {
      s = await startTestServer({
        config: { dialect },
        configFile: { accounts: [{ ...account("alice"), readOnlyToken: RO }, account("bob")] },
      });
    });
    afterAll(() => s.stop());
    const asReader = (path: string, init: RequestInit = {}) => s.api(path, { ...init, token: RO });

    test("reads everything the token reads", async () => {
      const published = await s.api(`/v2/publish/${rx.url}/x`, { method: "POST", body: "x", headers: { [`${P}-Delay`]: "1h" } });
      const { messageId } = (await published.json()) as { messageId: string };
      for (const path of [
        `/v2/messages/${messageId}`,
        "/v2/logs",
        "/v2/events",
        "/v2/dlq",
        "/v2/schedules",
        "/v2/queues",
        "/v2/topics",
        "/v2/flowControl",
        "/v2/globalParallelism",
        "/v2/workflows/logs",
        "/v2/keys",
        "/__svc/status",
      ]) {
        const res = await asReader(path);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
      }
      expect(await (await asReader("/__svc/status")).json()).toMatchObject({ userId: "alice-user", readOnly: true });
      expect(await (await s.api("/__svc/status")).json()).toMatchObject({ readOnly: false });
    });

    test("refused with 403 and a clear error on anything that publishes, changes or deletes; nothing changes", async () => {
      const published = await s.api(`/v2/publish/${rx.url}/kept`, { method: "POST", body: "x", headers: { [`${P}-Delay`]: "1h" } });
      const { messageId } = (await published.json()) as { messageId: string };
      const writes: Array<[string, string, RequestInit?]> = [
        ["POST", `/v2/publish/${rx.url}/nope`],
        ["POST", `/v2/enqueue/q1/${rx.url}/nope`],
        ["POST", "/v2/batch", jsonBody("POST", [{ destination: `${rx.url}/nope` }])],
        ["DELETE", `/v2/messages/${messageId}`],
        ["POST", "/v2/schedules/" + encodeURIComponent(`${rx.url}/nope`), { headers: { [`${P}-Cron`]: "* * * * *" } }],
        ["POST", "/v2/queues/", jsonBody("POST", { queueName: "q2" })],
        ["POST", "/v2/topics/g/endpoints", jsonBody("POST", { endpoints: [{ url: `${rx.url}/nope` }] })],
        ["POST", "/v2/flowControl/k/pause"],
        ["POST", "/v2/keys/rotate"],
        ["DELETE", "/v2/dlq/1-0"],
        ["POST", `/v2/trigger/${rx.url}/wf`],
        ["POST", "/v2/notify/evt"],
        ["POST", "/__svc/reset"],
      ];
      for (const [method, path, init] of writes) {
        const res = await asReader(path, { ...init, method, body: init?.body ?? (method === "POST" ? "x" : undefined) });
        const body = (await res.json()) as { error: string };
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
        expect(body.error).toContain("read-only token");
      }
      await flush(s.api);
      expect(rx.received.filter((r) => r.path === "/nope")).toEqual([]);
      expect((await s.api(`/v2/messages/${messageId}`)).status).toBe(200);
    });

    test("a read-only token is its own account's only: another account's data stays out of reach", async () => {
      const bob = account("bob");
      expect((await s.api("/__svc/status", { token: bob.token })).status).toBe(200);
      const status = (await (await asReader("/__svc/status")).json()) as { userId: string };
      expect(status.userId).toBe("alice-user");
      // Bob has a derived read-only token (printed at start); it is not alice's.
      const bobReader = s.server.ctx.accounts.byId("bob-user")!.readOnlyToken;
      expect(bobReader).toMatch(/^ro_/);
      expect(await (await s.api("/__svc/status", { token: bobReader })).json()).toMatchObject({ userId: "bob-user", readOnly: true });
      expect((await s.api("/v2/logs", { token: "ro_guessed" })).status).toBe(401);
    });

    if (dialect === "upstash")
      test("the official client with a read-only token: reads work, publish raises a QstashError 403", async () => {
        const reader = new Client({ baseUrl: s.url, token: RO, retry: false });
        expect(Array.isArray(await reader.schedules.list())).toBe(true);
        expect(await reader.logs()).toMatchObject({ logs: expect.any(Array) });
        const error = await reader.publish({ url: `${rx.url}/nope`, body: "x" }).then(() => undefined, (e: unknown) => e);
        expect(error).toBeInstanceOf(QstashError);
        expect((error as QstashError).status).toBe(403);
        expect((error as QstashError).message).toContain("read-only token");
      });
  });
}

test("a default account with a token of its own never answers to the well-known read-only token", async () => {
  const s = await startTestServer({ config: { defaultAccount: { ...parsed({ SVC_TOKEN: "my-own-secret" }) } } });
  try {
    expect((await s.api("/v2/logs", { token: "svcd_dev_readonly_token" })).status).toBe(401);
    const reader = s.ctx.accounts.all()[0]!.readOnlyToken;
    expect(reader).toMatch(/^ro_/);
    expect(await (await s.api("/__svc/status", { token: reader })).json()).toMatchObject({ readOnly: true });
  } finally {
    await s.stop();
  }
});

function parsed(env: Record<string, string>) {
  const result = parseCommandLine([], env);
  if (result.kind !== "run") throw new Error("expected a run");
  return result.config.defaultAccount;
}

test("the default account's read-only token: svcd_dev_readonly_token unless SVC_READONLY_TOKEN says otherwise", () => {
  const run = (env: Record<string, string>) => {
    const parsed = parseCommandLine([], env);
    if (parsed.kind !== "run") throw new Error("expected a run");
    return parsed.config.defaultAccount.readOnlyToken;
  };
  expect(run({})).toBe("svcd_dev_readonly_token");
  expect(run({ SVC_READONLY_TOKEN: "mine" })).toBe("mine");
});
