import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { account, jsonBody } from "../helpers/accounts.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let s: TestServer;
let rx: Receiver;
const other = account("other", { plan: "free" });
beforeAll(async () => {
  s = await startTestServer({
    config: { retryDelayScale: 0.001 },
    configFile: {
      plans: { free: { maxEndpointsPerGroup: 2 } },
      accounts: [account("main", { plan: "payg" }), other],
    },
  });
  rx = await startReceiver((req) => new Response(req.path.startsWith("/fail") ? "nope" : "ok", { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const addEndpoints = (group: string, endpoints: Array<{ url?: string; name?: string }>, token?: string) =>
  s.api(`/v2/topics/${group}/endpoints`, { ...jsonBody("POST", { endpoints }), token });
const removeEndpoints = (group: string, endpoints: Array<{ url?: string; name?: string }>) =>
  s.api(`/v2/topics/${group}/endpoints`, jsonBody("DELETE", { endpoints }));

describe("URL Groups", () => {
  test("a publish to a group of 3 fans out: 3 ids in a top-level array, 3 deliveries with the topic name", async () => {
    expect((await addEndpoints("fan", [{ url: `${rx.url}/fan/a`, name: "a" }, { url: `${rx.url}/fan/b`, name: "b" }, { url: `${rx.url}/fan/c` }])).status).toBe(200);
    const res = await s.api("/v2/publish/fan", { method: "POST", body: "to all" });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Array<{ messageId: string; url: string }>;
    expect(Array.isArray(answer)).toBe(true);
    expect(answer.map((m) => m.url)).toEqual([`${rx.url}/fan/a`, `${rx.url}/fan/b`, `${rx.url}/fan/c`]);
    expect(new Set(answer.map((m) => m.messageId)).size).toBe(3);
    const got = await rx.waitFor(3, { match: (r) => r.path.startsWith("/fan/") });
    expect(got.map((r) => r.headers.get("svc-message-id")).sort()).toEqual(answer.map((m) => m.messageId).sort());
    for (const r of got) {
      expect(r.headers.get("svc-topic-name")).toBe("fan");
      expect(r.text).toBe("to all");
    }
  });

  test("one failing endpoint goes to the DLQ alone, with topicName and endpointName", async () => {
    await addEndpoints("mixed", [{ url: `${rx.url}/mixed/ok1`, name: "ok1" }, { url: `${rx.url}/fail/x`, name: "broken" }, { url: `${rx.url}/mixed/ok2` }]);
    const res = await s.api("/v2/publish/mixed", { method: "POST", body: "m", headers: { "Svc-Retries": "1" } });
    const answer = (await res.json()) as Array<{ messageId: string; url: string }>;
    const failing = answer.find((m) => m.url.includes("/fail/"))!;
    const dlq = await waitUntil(async () => {
      const body = (await (await s.api("/v2/dlq?topicName=mixed")).json()) as { messages: Array<Record<string, unknown>> };
      return body.messages.length > 0 ? body.messages : null;
    });
    expect(dlq).toHaveLength(1);
    expect(dlq[0]!.messageId).toBe(failing.messageId);
    expect(dlq[0]!.topicName).toBe("mixed");
    expect(dlq[0]!.endpointName).toBe("broken");
    // The others were delivered once each, and the failing one was tried 1 + 1 times.
    await rx.waitFor(2, { match: (r) => r.path.startsWith("/mixed/") });
    expect(rx.received.filter((r) => r.path === "/fail/x")).toHaveLength(2);
    const logs = (await (await s.api(`/v2/logs?messageId=${failing.messageId}&state=FAILED`)).json()) as { logs: Array<Record<string, unknown>> };
    expect(logs.logs[0]!.topicName).toBe("mixed");
    expect(logs.logs[0]!.endpointName).toBe("broken");
  });

  test("get, list, remove endpoints; the group disappears with its last endpoint", async () => {
    await addEndpoints("shrink", [{ url: `${rx.url}/s/1`, name: "one" }, { url: `${rx.url}/s/2` }]);
    // Adding the same endpoints again changes nothing; a named one gets its new URL.
    await addEndpoints("shrink", [{ url: `${rx.url}/s/1b`, name: "one" }, { url: `${rx.url}/s/2` }]);
    const group = (await (await s.api("/v2/topics/shrink")).json()) as Record<string, any>;
    expect(group.name).toBe("shrink");
    expect(typeof group.createdAt).toBe("number");
    expect(typeof group.updatedAt).toBe("number");
    expect(group.endpoints).toEqual([{ name: "one", url: `${rx.url}/s/1b` }, { url: `${rx.url}/s/2` }]);
    const list = (await (await s.api("/v2/topics")).json()) as Array<{ name: string }>;
    expect(list.map((g) => g.name)).toContain("shrink");

    expect((await removeEndpoints("shrink", [{ name: "one" }])).status).toBe(200);
    expect(((await (await s.api("/v2/topics/shrink")).json()) as any).endpoints).toEqual([{ url: `${rx.url}/s/2` }]);
    expect((await removeEndpoints("shrink", [{ url: `${rx.url}/s/2` }])).status).toBe(200);
    const gone = await s.api("/v2/topics/shrink");
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: string }).error).toContain("shrink");
    expect((await removeEndpoints("shrink", [{ url: `${rx.url}/s/2` }])).status).toBe(404);
    expect((await removeEndpoints("fan", [{}])).status).toBe(400);
  });

  test("delete a group (idempotent); publishing to an unknown group is 404 with a clear error", async () => {
    await addEndpoints("doomed", [{ url: `${rx.url}/d` }]);
    expect((await s.api("/v2/topics/doomed", { method: "DELETE" })).status).toBe(200);
    // Idempotent: deleting it again (or a group that never existed) is 200 too.
    expect((await s.api("/v2/topics/doomed", { method: "DELETE" })).status).toBe(200);
    expect((await s.api("/v2/topics/never-was", { method: "DELETE" })).status).toBe(200);
    const res = await s.api("/v2/publish/doomed", { method: "POST", body: "x" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'URL Group "doomed" not found' });
  });

  test("PATCHed default headers reach the receiver; a publish header wins over a default", async () => {
    await addEndpoints("defaults", [{ url: `${rx.url}/defaults` }]);
    const patch = await s.api(
      "/v2/topics/defaults",
      jsonBody("PATCH", { headers: { "Svc-Forward-X-Default": "from-group", "Svc-Forward-X-Both": "from-group", "Svc-Method": ["PUT"] } }),
    );
    expect(patch.status).toBe(200);
    const group = (await (await s.api("/v2/topics/defaults")).json()) as { headers: Record<string, string[]> };
    expect(group.headers["Svc-Forward-X-Default"]).toEqual(["from-group"]);

    const [first] = (await (await s.api("/v2/publish/defaults", { method: "POST", body: "1" })).json()) as Array<{ messageId: string }>;
    const [got1] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === first!.messageId });
    expect(got1!.method).toBe("PUT");
    expect(got1!.headers.get("x-default")).toBe("from-group");
    expect(got1!.headers.get("x-both")).toBe("from-group");

    const [second] = (await (
      await s.api("/v2/publish/defaults", { method: "POST", body: "2", headers: { "Svc-Forward-X-Both": "from-publish", "Svc-Method": "POST" } })
    ).json()) as Array<{ messageId: string }>;
    const [got2] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === second!.messageId });
    expect(got2!.method).toBe("POST");
    expect(got2!.headers.get("x-default")).toBe("from-group");
    expect(got2!.headers.get("x-both")).toBe("from-publish");

    expect((await s.api("/v2/topics/nosuch", jsonBody("PATCH", { headers: {} }))).status).toBe(404);
    expect((await s.api("/v2/topics/defaults", jsonBody("PATCH", {}))).status).toBe(400);
    const bad = await s.api("/v2/topics/defaults", jsonBody("PATCH", { headers: "nope" }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("headers");
  });

  test("bad names and URLs are 400; plan limits on groups and endpoints are 412", async () => {
    expect((await addEndpoints("bad name!", [{ url: `${rx.url}/x` }])).status).toBe(400);
    expect((await addEndpoints("ok", [{ url: "ftp://example.com" }])).status).toBe(400);
    expect((await addEndpoints("ok", [{ name: "no-url" }])).status).toBe(400);
    expect((await addEndpoints("ok", [])).status).toBe(400);

    // The other account is on the free plan: 1 group, here at most 2 endpoints per group.
    expect((await addEndpoints("first", [{ url: `${rx.url}/o/1` }, { url: `${rx.url}/o/2` }], other.token)).status).toBe(200);
    const tooMany = await addEndpoints("first", [{ url: `${rx.url}/o/3` }], other.token);
    expect(tooMany.status).toBe(412);
    expect(((await tooMany.json()) as { error: string }).error).toContain("endpoints");
    expect((await addEndpoints("second", [{ url: `${rx.url}/o/1` }], other.token)).status).toBe(412);
    // Nothing of the refused writes was kept.
    const first = (await (await s.api("/v2/topics/first", { token: other.token })).json()) as { endpoints: unknown[] };
    expect(first.endpoints).toHaveLength(2);
  });

  test("another account's group is invisible (404) and publishing to it is 404", async () => {
    await addEndpoints("private-to-other", [{ url: `${rx.url}/p` }], other.token);
    expect((await s.api("/v2/topics/private-to-other")).status).toBe(404);
    expect((await s.api("/v2/publish/private-to-other", { method: "POST" })).status).toBe(404);
    expect((await removeEndpoints("private-to-other", [{ url: `${rx.url}/p` }])).status).toBe(404);
    expect(((await (await s.api("/v2/topics")).json()) as Array<{ name: string }>).map((g) => g.name)).not.toContain("private-to-other");
  });
});

describe("URL Groups in the upstash dialect", () => {
  test("default headers use the dialect's prefix", async () => {
    const up = await startTestServer({ config: { dialect: "upstash" } });
    try {
      await up.api("/v2/topics/g/endpoints", jsonBody("POST", { endpoints: [{ url: `${rx.url}/upstash` }] }));
      await up.api("/v2/topics/g", jsonBody("PATCH", { headers: { "Upstash-Forward-X-Up": "yes" } }));
      const [m] = (await (await up.api("/v2/publish/g", { method: "POST" })).json()) as Array<{ messageId: string }>;
      const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("upstash-message-id") === m!.messageId });
      expect(got!.headers.get("x-up")).toBe("yes");
      expect(got!.headers.get("upstash-topic-name")).toBe("g");
    } finally {
      await up.stop();
    }
  });
});
