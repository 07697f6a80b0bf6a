/** `GET /__svc/events`: the account's message lifecycle as server-sent events, from a real server. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { account } from "../helpers/accounts.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let svc: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  [svc, receiver] = await Promise.all([startTestServer({ configFile: { accounts: [account("alpha"), account("beta")] } }), startReceiver()]);
});
afterAll(async () => {
  receiver?.stop();
  await svc?.stop();
});

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** Opens the stream and collects its frames as they arrive. */
async function listen(server: TestServer, token: string) {
  const abort = new AbortController();
  const res = await fetch(`${server.url}/__svc/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const frames: Frame[] = [];
  let ended = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const text = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(text)?.[1];
          const data = /^data: (.*)$/m.exec(text)?.[1];
          if (event && data) frames.push({ event, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  return {
    frames,
    ended: () => ended,
    of: (messageId: string) => frames.filter((f) => f.data.messageId === messageId),
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

const publish = async (token: string, path: string, headers: Record<string, string> = {}) => {
  const res = await svc.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", token, headers, body: "x" });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
};

describe("GET /__svc/events", () => {
  test("the caller's messages, from created to delivered or failed, in order; another account's never", async () => {
    const stream = await listen(svc, "alpha_token");
    await waitUntil(() => stream.frames.some((f) => f.event === "ready"), { what: "the ready frame" });
    expect(stream.frames[0]).toEqual({ event: "ready", data: { userId: "alpha-user" } });

    const theirs = await publish("beta_token", "/beta");
    const delivered = await publish("alpha_token", "/alpha", { "Svc-Label": "live" });
    receiver.setHandler((r) => (r.path === "/broken" ? new Response("no", { status: 503 }) : new Response("ok")));
    const failed = await publish("alpha_token", "/broken", { "Svc-Retries": "0" });
    await waitUntil(() => stream.of(delivered).some((f) => f.event === "delivered") && stream.of(failed).some((f) => f.event === "failed"), {
      what: "both messages ended in the stream",
    });
    await receiver.waitFor(1, { match: (r) => r.path === "/beta" });
    await svc.api("/__svc/flush", { method: "POST", token: "beta_token" });

    expect(stream.of(delivered).map((f) => f.event)).toEqual(["created", "claimed", "delivered"]);
    expect(stream.of(delivered).at(-1)!.data).toMatchObject({ type: "delivered", url: `${receiver.url}/alpha`, status: 200, labels: ["live"] });
    expect(stream.of(failed).at(-1)!.data).toMatchObject({ type: "failed", status: 503 });
    expect(stream.of(failed).at(-1)!.data.dlqId).toBeString();
    expect(stream.of(theirs)).toEqual([]);
    expect(stream.frames.every((f) => f.event === "ready" || String(f.data.url).includes("/alpha") || String(f.data.url).includes("/broken"))).toBe(true);
    await stream.close();
  });

  test("refused without the account's token", async () => {
    expect((await fetch(`${svc.url}/__svc/events`)).status).toBe(401);
    expect((await fetch(`${svc.url}/__svc/events`, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
  });

  test("an open stream does not hold up the server's stop: it ends", async () => {
    const other = await startTestServer();
    const stream = await listen(other, other.token);
    await waitUntil(() => stream.frames.length > 0, { what: "the ready frame" });
    await other.stop();
    await waitUntil(() => stream.ended(), { what: "the stream ended" });
  });
});
