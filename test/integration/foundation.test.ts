import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { basicAuth, startTestServer, type TestServer } from "../helpers/server.ts";

const ALICE = { email: "alice@example.com", apiKey: "alice-key", userId: "alice", token: "alice-token" };
const BOB = { email: "bob@example.com", apiKey: "bob-key", userId: "bob", token: "bob-token" };
const configFile: ConfigFile = { accounts: [ALICE, BOB] };

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ configFile });
});
afterAll(() => s.stop());

async function expectJsonError(res: Response, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { error: unknown };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(typeof body.error).toBe("string");
  return body.error as string;
}

describe("health", () => {
  test("answers without credentials once the store is open", async () => {
    const res = await fetch(`${s.url}/__svc/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });
});

describe("messaging auth", () => {
  test("missing token → 401 JSON", async () => {
    expect(await expectJsonError(await s.api("/v2/keys", { token: null }), 401)).toBe("Unauthorized");
  });
  test("wrong token → 401", async () => {
    await expectJsonError(await s.api("/v2/keys", { token: "nope" }), 401);
  });
  test("Basic credentials are not a messaging token", async () => {
    await expectJsonError(await s.api("/v2/keys", { headers: { authorization: basicAuth(ALICE.email, ALICE.apiKey) } }), 401);
  });
  test("svc_token query parameter is accepted", async () => {
    const res = await fetch(`${s.url}/v2/keys?svc_token=${ALICE.token}`);
    expect(res.status).toBe(200);
  });
  test("svc_token also works on routes whose query has a schema of its own", async () => {
    const call = (method: string, path: string, token: string, body?: string) =>
      fetch(`${s.url}${path}${path.includes("?") ? "&" : "?"}svc_token=${token}`, { method, body });
    expect(await (await call("POST", "/__svc/flush?timeout=5000", ALICE.token)).json()).toEqual({ idle: true });
    expect((await call("GET", "/__svc/stats?period=1d", ALICE.token)).status).toBe(200);
    expect((await call("POST", "/v2/flowControl/partner/pin?rate=5&period=60", ALICE.token)).status).toBe(200);
    const pinned = (await (await s.api("/v2/flowControl/partner", { token: ALICE.token })).json()) as Record<string, unknown>;
    expect([pinned.isPinnedRate, pinned.rateMax, pinned.ratePeriod]).toEqual([true, 5, 60]);
    expect((await call("POST", "/v2/flowControl/partner/unpin?rate=true", ALICE.token)).status).toBe(200);
    // Past validation: the real clock refuses to move (409), an unknown run is 404.
    await expectJsonError(await call("POST", "/__svc/clock/advance?flush=true", ALICE.token, '{"ms":1}'), 409);
    await expectJsonError(await call("DELETE", "/v2/workflows/runs/wfr_none?cancel=true", ALICE.token), 404);
    // The token still decides: a wrong one is 401, another account's key is its own.
    await expectJsonError(await call("POST", "/v2/flowControl/partner/pin?rate=5", "nope"), 401);
    await expectJsonError(await s.api("/v2/flowControl/partner", { token: BOB.token }), 404);
  });
  test("each account sees its own keys", async () => {
    const a = (await (await s.api("/v2/keys", { token: ALICE.token })).json()) as { current: string; next: string };
    const b = (await (await s.api("/v2/keys", { token: BOB.token })).json()) as { current: string; next: string };
    expect(a.current).toMatch(/^sig_[1-9A-HJ-NP-Za-km-z]{28}$/);
    expect(a.current).not.toBe(b.current);
  });
  test("another account's message is 404, not 403", async () => {
    const pub = await s.api("/v2/publish/http://127.0.0.1:9/x?svc-delay=1h", { method: "POST", body: "x", token: ALICE.token });
    const { messageId } = (await pub.json()) as { messageId: string };
    await expectJsonError(await s.api(`/v2/messages/${messageId}`, { token: BOB.token }), 404);
    expect((await s.api(`/v2/messages/${messageId}`, { token: ALICE.token })).status).toBe(200);
  });
});

describe("management auth", () => {
  test("missing or wrong Basic credentials → 401 with a Basic challenge", async () => {
    for (const res of [
      await s.mgmt("/v2/search", { noAuth: true }),
      await s.mgmt("/v2/search", { email: ALICE.email, apiKey: "wrong" }),
      await s.mgmt("/v2/search", { headers: { authorization: `Bearer ${ALICE.token}` } }),
    ]) {
      await expectJsonError(res, 401);
      expect(res.headers.get("www-authenticate")).toStartWith("Basic");
    }
  });
});

describe("error mapping", () => {
  test("unknown route → 404 JSON", async () => {
    expect(await expectJsonError(await s.api("/v2/nothing-here"), 404)).toContain("/v2/nothing-here");
  });
  test("wrong method on a known path → 405 JSON with Allow", async () => {
    const res = await s.api("/v2/keys", { method: "DELETE" });
    await expectJsonError(res, 405);
    expect(res.headers.get("allow")).toContain("GET");
  });
  test("malformed input → 400 JSON naming the field", async () => {
    const msg = await expectJsonError(await s.api("/v2/publish/http://127.0.0.1:9/x", { method: "POST", headers: { "Svc-Retries": "many" } }), 400);
    expect(msg).toContain("Svc-Retries");
  });
  test("invalid JSON → 400 JSON", async () => {
    await expectJsonError(await s.api("/v2/dlq", { method: "DELETE", body: "{not json", headers: { "content-type": "application/json" } }), 400);
  });
});
