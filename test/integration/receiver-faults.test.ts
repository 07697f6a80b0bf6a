import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dlqEntryOf, expectIdleAndConsistent, waitForState } from "../helpers/inspect.ts";
import { startTcpReceiver, type TcpReceiver } from "../helpers/raw-tcp.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Receivers that misbehave: every fault ends as a retry and then a DLQ entry with a clear error
 * in the log, never a stuck message, a crashed worker or a crashed server.
 */

const MAX_MESSAGE_SIZE = 1024 * 1024; // the free plan
let s: TestServer;
let rx: Receiver;
const tcp: TcpReceiver[] = [];
const released: Array<() => void> = [];

beforeAll(async () => {
  s = await startTestServer({
    configFile: { accounts: [{ email: "f@x.io", apiKey: "key-f", userId: "free-user", token: "free-token", plan: "free" }] },
  });
  rx = await startReceiver(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/slow") {
      // Answers only when the test lets it (at the end): later than any timeout, whatever the load.
      await new Promise<void>((resolve) => released.push(resolve));
      return new Response("too late");
    }
    if (path === "/slow-body") {
      // Headers at once, then a body that trickles for longer than the timeout.
      let timer: ReturnType<typeof setInterval>;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          timer = setInterval(() => {
            try {
              controller.enqueue(new TextEncoder().encode("."));
            } catch {
              clearInterval(timer);
            }
          }, 100);
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, { status: 200 });
    }
    if (path === "/redirect") return new Response(null, { status: 302, headers: { location: `${rx.url}/redirect-target` } });
    if (path === "/huge") {
      // 50 MB, streamed: the server keeps at most the plan's max message size of it.
      let sent = 0;
      const chunk = new Uint8Array(1024 * 1024).fill(0x61);
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 50) return controller.close();
          sent++;
          controller.enqueue(chunk);
        },
      });
      return new Response(body, { status: 500 });
    }
    if (path === "/hold-first") {
      // The first attempt hangs until the test releases it; later attempts succeed.
      if (req.headers.get("svc-retried") === "0") await new Promise<void>((resolve) => released.push(resolve));
      return new Response("ok");
    }
    return new Response("ok");
  });
  // A server that resets the connection as soon as the request arrives.
  tcp.push(startTcpReceiver((socket) => socket.terminate()));
  // One that closes the connection cleanly without answering.
  tcp.push(startTcpReceiver((socket) => socket.end()));
  // One that never answers.
  tcp.push(startTcpReceiver(() => {}));
  // One that announces 100,000 bytes, sends 5 and closes.
  tcp.push(
    startTcpReceiver((socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: text/plain\r\n\r\nhello");
      socket.flush();
      setTimeout(() => socket.end(), 20);
    }),
  );
  // One that answers something that is not HTTP.
  tcp.push(
    startTcpReceiver((socket) => {
      socket.write("SMTP ready, not HTTP\r\n\r\n");
      socket.flush();
      setTimeout(() => socket.end(), 20);
    }),
  );
});

afterAll(async () => {
  for (const release of released) release();
  for (const t of tcp) t.stop();
  rx.stop();
  await s.stop();
});

async function publish(destination: string, headers: Record<string, string> = {}) {
  const res = await s.api(`/v2/publish/${destination}`, {
    method: "POST",
    body: "payload",
    // One retry 50 ms later: every fault is seen once as a retry and once as the final failure.
    headers: { "Svc-Retries": "1", "Svc-Retry-Delay": "50", "Svc-Timeout": "1s", ...headers },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}

/** The fault ended as RETRY then FAILED with `error` matching, a DLQ entry, and no waiting message. */
async function expectRetriedThenDeadLettered(messageId: string, error: RegExp) {
  const logs = await waitForState(s, messageId, ["FAILED", "DELIVERED"]);
  expect(logs.map((l) => l.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "ERROR", "FAILED"]);
  const errors = logs.filter((l) => l.state === "ERROR" || l.state === "FAILED").map((l) => l.error ?? "");
  for (const e of errors) expect(e).toMatch(error);
  // A clear sentence, not a stack trace or a hint about fetch options.
  for (const e of errors) {
    expect(e).not.toContain("verbose");
    expect(e).not.toMatch(/\n\s+at /);
  }
  const entry = await dlqEntryOf(s, messageId);
  expect(entry).toBeDefined();
  expect((await s.api(`/v2/messages/${messageId}`)).status).toBe(404);
  return { logs, entry: entry! };
}

describe("receiver faults end as a retry, then a DLQ entry with a clear error", () => {
  test("an answer slower than the timeout", async () => {
    const id = await publish(`${rx.url}/slow`);
    await expectRetriedThenDeadLettered(id, /^timeout: no complete answer within 1000 ms$/);
  });

  test("headers in time but a body that never ends", async () => {
    const id = await publish(`${rx.url}/slow-body`);
    await expectRetriedThenDeadLettered(id, /timeout/);
  });

  test("a connection reset as soon as the request arrives", async () => {
    const id = await publish(`${tcp[0]!.url}/reset`);
    await expectRetriedThenDeadLettered(id, /connection/i);
    expect(tcp[0]!.connections()).toBeGreaterThanOrEqual(2);
  });

  test("a connection closed without an answer", async () => {
    const id = await publish(`${tcp[1]!.url}/closed`);
    await expectRetriedThenDeadLettered(id, /connection/i);
  });

  test("a receiver that never answers", async () => {
    const id = await publish(`${tcp[2]!.url}/silent`);
    await expectRetriedThenDeadLettered(id, /^timeout/);
  });

  test("a receiver that closes mid-body counts as a failure even after a 200 status line", async () => {
    const id = await publish(`${tcp[3]!.url}/mid-body`);
    await expectRetriedThenDeadLettered(id, /^the answer broke off after status 200: .*connection/i);
  });

  test("an answer that is not HTTP at all", async () => {
    const id = await publish(`${tcp[4]!.url}/garbage`);
    await expectRetriedThenDeadLettered(id, /malformed|HTTP/i);
  });

  test("a 302 redirect is not followed and counts as a failure", async () => {
    const id = await publish(`${rx.url}/redirect`);
    const { entry } = await expectRetriedThenDeadLettered(id, /^the destination answered 302$/);
    expect(entry.responseStatus).toBe(302);
    expect(rx.received.filter((r) => r.path === "/redirect")).toHaveLength(2);
    expect(rx.received.filter((r) => r.path === "/redirect-target")).toHaveLength(0);
  });

  test("a 50 MB answer: only the plan's max message size is kept", async () => {
    const id = await publish(`${rx.url}/huge`);
    const { logs, entry } = await expectRetriedThenDeadLettered(id, /^the destination answered 500$/);
    expect(entry.responseStatus).toBe(500);
    const kept: string = entry.responseBody ?? Buffer.from(entry.responseBodyBase64 ?? "", "base64").toString("latin1");
    expect(kept.length).toBe(MAX_MESSAGE_SIZE);
    expect(kept).toBe("a".repeat(MAX_MESSAGE_SIZE));
    // The log keeps even less (its own cap), never the 50 MB.
    const logged = Buffer.from(logs.at(-1)!.responseBody ?? "", "base64");
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.length).toBeLessThanOrEqual(MAX_MESSAGE_SIZE);
  });

  test("a host name that does not resolve", async () => {
    const id = await publish("http://does-not-exist.invalid/x");
    await expectRetriedThenDeadLettered(id, /does-not-exist\.invalid/);
  });

  test("a port nobody listens on", async () => {
    const id = await publish("http://127.0.0.1:9/refused");
    await expectRetriedThenDeadLettered(id, /refused|connect/i);
  });

  test("after all of them the workers still answer, deliver, and nothing is stuck", async () => {
    const workers = await s.server.messaging.pool.ping();
    expect(workers.length).toBe(s.config.workers);
    const id = await publish(`${rx.url}/fine`);
    const logs = await waitForState(s, id, ["DELIVERED", "FAILED"]);
    expect(logs.at(-1)!.state).toBe("DELIVERED");
    await expectIdleAndConsistent(s);
  });
});

describe("a delivery worker that dies is replaced and its in-flight messages are retried", () => {
  for (const how of ["exit", "throw"] as const) {
    test(`worker ${how === "exit" ? "calls process.exit()" : "throws an uncaught exception"} mid-attempt`, async () => {
      const pool = s.server.messaging.pool;
      const before = rx.received.filter((r) => r.path === "/hold-first").length;
      const id = await publish(`${rx.url}/hold-first`, { "Svc-Retries": "2" });
      // The first attempt is now held open by the receiver: it is in flight in a worker.
      await rx.waitFor(before + 1, { match: (r) => r.path === "/hold-first" });
      expect(pool.inFlight).toBe(1);
      for (let i = 0; i < s.config.workers; i++) pool.crashWorker(i, how);

      const logs = await waitForState(s, id, ["DELIVERED", "FAILED"]);
      expect(logs.map((l) => l.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED"]);
      expect(logs[2]!.error).toBe("delivery worker crashed during the attempt");
      const attempts = rx.received.filter((r) => r.path === "/hold-first" && r.headers.get("svc-message-id") === id);
      expect(attempts.map((r) => r.headers.get("svc-retried"))).toEqual(["0", "1"]);

      // The replacements are alive and deliver.
      expect((await pool.ping()).sort()).toEqual(Array.from({ length: s.config.workers }, (_, i) => i));
      expect(pool.inFlight).toBe(0);
      await expectIdleAndConsistent(s);
      while (released.length) released.pop()!();
    });
  }
});

test("many faults at once never leave a message waiting forever", async () => {
  const destinations = [
    `${rx.url}/slow`,
    `${tcp[0]!.url}/r`,
    `${tcp[2]!.url}/s`,
    `${tcp[3]!.url}/m`,
    `${rx.url}/redirect`,
    "http://127.0.0.1:9/refused",
    `${rx.url}/fine`,
  ];
  const ids = await Promise.all(
    Array.from({ length: 35 }, (_, i) => publish(destinations[i % destinations.length]!, { "Svc-Retries": "0" })),
  );
  await waitUntil(
    async () => {
      const states = await Promise.all(ids.map(async (id) => (await waitForState(s, id, ["FAILED", "DELIVERED"])).at(-1)!.state));
      return states.length === ids.length;
    },
    { timeoutMs: 20_000, what: "every message to end" },
  );
  await expectIdleAndConsistent(s);
});
