/**
 * Steering flow-control keys through the API (docs/messaging-api.md, Steering a key): pause and resume, pin and unpin,
 * resetRate, the global parallelism; enforced by the delivery engine and kept across a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { FlowControlView } from "../../src/flow-control/service.ts";
import { account } from "../helpers/accounts.ts";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let s: TestServer;
let rx: Receiver;
/** Per path: deliveries being answered now and the most at once. */
const inFlight = new Map<string, number>();
const most = new Map<string, number>();
/** Requests to /held/... are answered once the test opens the gate; `close` makes new ones wait again. */
class Gate {
  private opened = Promise.withResolvers<void>();
  wait = () => this.opened.promise;
  open = () => this.opened.resolve();
  close = () => (this.opened = Promise.withResolvers<void>());
}
const gate = new Gate();
const small = account("small", { plan: "free" });

beforeAll(async () => {
  s = await startTestServer({ configFile: { plans: { free: { flowGlobalParallelism: 2 } }, accounts: [account("main"), small] } });
  rx = await startReceiver(async (req) => {
    const path = req.path.split("?")[0]!;
    inFlight.set(path, (inFlight.get(path) ?? 0) + 1);
    most.set(path, Math.max(most.get(path) ?? 0, inFlight.get(path)!));
    if (path.startsWith("/held")) await gate.wait();
    inFlight.set(path, inFlight.get(path)! - 1);
    return new Response("ok");
  });
});
afterAll(async () => {
  gate.open();
  rx.stop();
  await s.stop();
});

const post = (path: string, token?: string) => s.api(path, { method: "POST", token });
const view = async (key: string, token?: string) => (await (await s.api(`/v2/flowControl/${key}`, { token })).json()) as FlowControlView;
const at = (path: string) => rx.received.filter((r) => r.path === path);
async function publish(path: string, key: string, value: string, body = "", token?: string, headers: Record<string, string> = {}) {
  const res = await s.api(`/v2/publish/${rx.url}${path}`, {
    method: "POST",
    body,
    token,
    headers: { "Svc-Flow-Control-Key": key, "Svc-Flow-Control-Value": value, ...headers },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}

describe("pause and resume", () => {
  test("a key paused before its first message exists; its messages wait (never failed) and go after resume", async () => {
    expect((await post("/v2/flowControl/early/pause")).status).toBe(200);
    expect(await view("early")).toMatchObject({ flowControlKey: "early", isPaused: true, waitListSize: 0, parallelismMax: 0 });
    for (let i = 0; i < 3; i++) await publish("/early", "early", "parallelism=2", String(i));
    // Everything else still flows, and a flush does not wait for the paused key.
    await publish("/unrelated", "unrelated", "parallelism=1");
    await flush(s.api);
    expect(at("/unrelated")).toHaveLength(1);
    expect(at("/early")).toHaveLength(0);
    expect(await view("early")).toMatchObject({ isPaused: true, waitListSize: 3, parallelismCount: 0, parallelismMax: 2 });
    const logs = (await (await s.api("/v2/logs?flowControlKey=early&state=FAILED,ERROR")).json()) as { logs: unknown[] };
    expect(logs.logs).toEqual([]);

    expect((await post("/v2/flowControl/early/resume")).status).toBe(200);
    const got = await rx.waitFor(3, { match: (r) => r.path === "/early" });
    expect(got.map((r) => r.text).sort()).toEqual(["0", "1", "2"]);
    expect((await view("early")).isPaused).toBe(false);
  });

  test("pausing a busy key lets the running delivery finish and starts no other; a big backlog waits too", async () => {
    gate.close();
    for (let i = 0; i < 100; i++) await publish("/held/busy", "busy", "parallelism=1", String(i));
    await rx.waitFor(1, { match: (r) => r.path === "/held/busy" });
    expect((await post("/v2/flowControl/busy/pause")).status).toBe(200);
    gate.open();
    await waitUntil(async () => {
      const v = await view("busy");
      return v.parallelismCount === 0 && v.waitListSize === 99;
    }, { what: "the running delivery to end and the rest to wait" });
    // Some wait in the key's worker, the rest in the database: a flush waits for neither.
    await flush(s.api);
    expect(at("/held/busy")).toHaveLength(1);
    expect((await post("/v2/flowControl/busy/resume")).status).toBe(200);
    const got = await rx.waitFor(100, { match: (r) => r.path === "/held/busy" });
    expect(got.map((r) => Number(r.text))).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(most.get("/held/busy")).toBe(1);
  });
});

describe("pin, unpin, resetRate", () => {
  test("pinned parallelism 1 overrides the messages' 5: never two in flight; unpinned, they run 5 at once", async () => {
    gate.close();
    expect((await post("/v2/flowControl/pinned/pin?parallelism=1")).status).toBe(200);
    for (let i = 0; i < 4; i++) await publish("/held/pinned", "pinned", "parallelism=5", String(i));
    await rx.waitFor(1, { match: (r) => r.path === "/held/pinned" });
    const pinned = await waitUntil(async () => {
      const v = await view("pinned");
      return v.waitListSize === 3 ? v : null;
    });
    expect(pinned).toMatchObject({ parallelismMax: 1, parallelismCount: 1, isPinnedParallelism: true, isPinnedRate: false });
    expect(at("/held/pinned")).toHaveLength(1);
    gate.open();
    await rx.waitFor(4, { match: (r) => r.path === "/held/pinned" });
    expect(most.get("/held/pinned")).toBe(1);

    expect((await post("/v2/flowControl/pinned/unpin?parallelism=true")).status).toBe(200);
    gate.close();
    for (let i = 0; i < 5; i++) await publish("/held/unpinned", "pinned", "parallelism=5", String(i));
    await rx.waitFor(5, { match: (r) => r.path === "/held/unpinned" });
    expect(most.get("/held/unpinned")).toBe(5);
    expect(await view("pinned")).toMatchObject({ parallelismMax: 5, isPinnedParallelism: false });
    gate.open();
  });

  test("a pinned rate holds what the messages would allow; resetRate starts a new period; unpin gives the messages' rate back", async () => {
    expect((await post("/v2/flowControl/rated/pin?rate=1&period=3600")).status).toBe(200);
    for (let i = 0; i < 3; i++) await publish("/rated", "rated", "rate=100", String(i));
    await rx.waitFor(1, { match: (r) => r.path === "/rated" });
    const waiting = await waitUntil(async () => {
      const v = await view("rated");
      return v.waitListSize === 2 ? v : null;
    });
    expect(waiting).toMatchObject({ rateMax: 1, rateCount: 1, ratePeriod: 3600, isPinnedRate: true });
    expect(at("/rated")).toHaveLength(1);

    const before = Math.floor(Date.now() / 1000);
    expect((await post("/v2/flowControl/rated/resetRate")).status).toBe(200);
    await rx.waitFor(2, { match: (r) => r.path === "/rated" });
    const reset = await view("rated");
    expect(reset).toMatchObject({ rateCount: 1, waitListSize: 1 });
    expect(reset.ratePeriodStart).toBeGreaterThanOrEqual(before);

    expect((await post("/v2/flowControl/rated/unpin?rate=true")).status).toBe(200);
    await rx.waitFor(3, { match: (r) => r.path === "/rated" });
    expect(await view("rated")).toMatchObject({ rateMax: 100, ratePeriod: 1, isPinnedRate: false });
  });

  test("bad values answer 400 naming them; nothing changes", async () => {
    for (const [path, named] of [
      ["/v2/flowControl/bad/pin?parallelism=0", "parallelism"],
      ["/v2/flowControl/bad/pin?rate=fast", "rate"],
      ["/v2/flowControl/bad/pin?period=604801", "period"],
      ["/v2/flowControl/bad/pin", "nothing to pin"],
      ["/v2/flowControl/bad/unpin?rate=maybe", "rate"],
      ["/v2/flowControl/bad/unpin", "nothing to unpin"],
      ["/v2/flowControl/a%20b/pause", "flow-control key"],
    ] as const) {
      const res = await post(path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(((await res.json()) as { error: string }).error).toContain(named);
    }
    expect((await s.api("/v2/flowControl/bad")).status).toBe(404);
    expect((await s.api("/v2/flowControl/bad/pause")).status).toBe(405);
  });

  test("another account's key of the same name is its own", async () => {
    expect((await post("/v2/flowControl/shared/pause")).status).toBe(200);
    await publish("/shared-other", "shared", "parallelism=1", "", small.token);
    await rx.waitFor(1, { match: (r) => r.path === "/shared-other" });
    await publish("/shared-later", "shared", "parallelism=1", "", small.token, { "Svc-Delay": "1h" });
    expect((await view("shared", small.token)).isPaused).toBe(false);
    expect((await view("shared")).isPaused).toBe(true);
    const list = (await (await s.api("/v2/flowControl", { token: small.token })).json()) as FlowControlView[];
    expect(list.map((v) => v.flowControlKey)).toEqual(["shared"]);
  });
});

describe("global parallelism", () => {
  test("the account's flow-controlled deliveries never run more than its plan's limit at once, across keys", async () => {
    gate.close();
    expect(await (await s.api("/v2/globalParallelism")).json()).toEqual({ parallelismMax: 100, parallelismCount: 0 });
    for (const key of ["g1", "g2", "g3"]) for (let i = 0; i < 2; i++) await publish(`/held/global-${key}`, key, "parallelism=2", "", small.token);
    await waitUntil(async () => {
      const g = (await (await s.api("/v2/globalParallelism", { token: small.token })).json()) as { parallelismCount: number };
      return g.parallelismCount === 2;
    });
    expect(await (await s.api("/v2/globalParallelism", { token: small.token })).json()).toEqual({ parallelismMax: 2, parallelismCount: 2 });
    expect(rx.received.filter((r) => r.path.startsWith("/held/global-"))).toHaveLength(2);
    gate.open();
    await rx.waitFor(6, { match: (r) => r.path.startsWith("/held/global-") });
    await waitUntil(async () => ((await (await s.api("/v2/globalParallelism", { token: small.token })).json()) as { parallelismCount: number }).parallelismCount === 0);
  });
});

describe("across a restart", () => {
  test("pause and pins survive a restart: held messages stay held until resume", async () => {
    const a = await startTestServer();
    const dirs = [a.dir];
    try {
      expect((await a.api("/v2/flowControl/kept/pin?parallelism=3&rate=7&period=60", { method: "POST" })).status).toBe(200);
      expect((await a.api("/v2/flowControl/kept/pause", { method: "POST" })).status).toBe(200);
      for (let i = 0; i < 2; i++) {
        const res = await a.api(`/v2/publish/${rx.url}/kept`, {
          method: "POST",
          headers: { "Svc-Flow-Control-Key": "kept", "Svc-Flow-Control-Value": "parallelism=9" },
        });
        expect(res.status).toBe(200);
      }
      await a.server.stop({ deadlineMs: 2000 });

      const b = await startTestServer({ config: { dbPath: a.config.dbPath } });
      dirs.push(b.dir);
      await flush(b.api);
      expect(at("/kept")).toHaveLength(0);
      const kept = (await (await b.api("/v2/flowControl/kept")).json()) as FlowControlView;
      expect(kept).toMatchObject({
        isPaused: true,
        isPinnedParallelism: true,
        isPinnedRate: true,
        parallelismMax: 3,
        rateMax: 7,
        ratePeriod: 60,
        waitListSize: 2,
      });
      expect((await b.api("/v2/flowControl/kept/resume", { method: "POST" })).status).toBe(200);
      await rx.waitFor(2, { match: (r) => r.path === "/kept" });
      await b.server.stop({ deadlineMs: 500 });
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
