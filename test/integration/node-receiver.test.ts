import { afterAll, beforeAll, expect } from "bun:test";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { waitForState } from "../helpers/inspect.ts";
import { testUnless } from "../helpers/skip.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * The receiver verification module under Node itself: the example server of examples/ runs in a
 * `node` subprocess, importing `svcd/verify` through the package's exports, and checks real
 * deliveries of both dialects (`Svc-Signature`, and `Upstash-Signature` with the issuer
 * `Upstash`). A relay in front of it passes one delivery on untouched and changes the body of
 * another, as a tampering proxy would. A second one, reached directly, gets deliveries whose method
 * is GET or HEAD with a body: the body arrives, and matches the signature's claim.
 */

const ROOT = new URL("../..", import.meta.url).pathname;
const NODE = Bun.which("node");

interface Verdict {
  path: string;
  messageId: string | null;
  verified: boolean;
  reason: string | null;
}

/** Starts examples/node-receiver.mjs on a free port; its verdicts go to `verdicts`. */
async function startReceiver(env: Record<string, string>, verdicts: Verdict[]) {
  const account = s.ctx.accounts.all()[0]!;
  const child = spawn(NODE!, ["examples/node-receiver.mjs", "0"], {
    cwd: ROOT,
    env: { ...process.env, SVC_CURRENT_SIGNING_KEY: account.currentSigningKey, SVC_NEXT_SIGNING_KEY: account.nextSigningKey, ...env },
  });
  const lines = createInterface({ input: child.stdout });
  const port = new Promise<number>((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`node receiver exited with ${code}`)));
    lines.on("line", (line) => {
      const listening = /^listening on (\d+)$/.exec(line);
      if (listening) resolve(Number(listening[1]));
      else verdicts.push(JSON.parse(line) as Verdict);
    });
  });
  receivers.push(child);
  return `http://127.0.0.1:${await port}`;
}

let s: TestServer;
/** The same account's keys on a server of the other dialect: Upstash-Signature, issuer "Upstash". */
let upstash: TestServer;
const receivers: ChildProcessWithoutNullStreams[] = [];
const verdicts: Verdict[] = [];
let relay: ReturnType<typeof Bun.serve>;
let receiverUrl = "";

beforeAll(async () => {
  s = await startTestServer();
  upstash = await startTestServer({ config: { dialect: "upstash" } });
  relay = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const body = new Uint8Array(await request.arrayBuffer());
      if (url.pathname.includes("tampered")) body[0] = body[0]! ^ 1;
      return fetch(`${receiverUrl}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body });
    },
  });
  if (!NODE) return;
  // svcd delivers to the relay: that is the URL the signature names.
  receiverUrl = await startReceiver({ PUBLIC_URL: `http://127.0.0.1:${relay.port}` }, verdicts);
});

afterAll(async () => {
  for (const child of receivers) child.kill();
  relay?.stop(true);
  await s?.stop();
  await upstash?.stop();
});

testUnless(NODE ? null : "needs node on the PATH")("under Node, the verify module accepts a real delivery and refuses a tampered body", async () => {
  const publish = async (path: string, server = s) => {
    const res = await server.api(`/v2/publish/http://127.0.0.1:${relay.port}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", [`${server === s ? "Svc" : "Upstash"}-Retries`]: "0" },
      body: JSON.stringify({ order: 42, path }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messageId: string }).messageId;
  };
  const genuine = await publish("/orders/genuine?x=1");
  const tampered = await publish("/orders/tampered");
  const fromUpstash = await publish("/orders/upstash", upstash);

  await waitUntil(() => verdicts.length >= 3, { what: "three verdicts from the node receiver" });
  expect(verdicts.find((v) => v.messageId === genuine)).toEqual({ path: "/orders/genuine?x=1", messageId: genuine, verified: true, reason: null });
  expect(verdicts.find((v) => v.messageId === fromUpstash)).toEqual({ path: "/orders/upstash", messageId: fromUpstash, verified: true, reason: null });
  const refused = verdicts.find((v) => v.messageId === tampered)!;
  expect(refused.verified).toBe(false);
  expect(refused.reason).toContain("body hash does not match");

  // svcd saw the receiver's answers: delivered, and refused with 401 into the DLQ.
  expect((await waitForState(s, genuine, ["DELIVERED"])).at(-1)!.state).toBe("DELIVERED");
  expect((await waitForState(s, tampered, ["FAILED"])).at(-1)!.responseStatus).toBe(401);
});

testUnless(NODE ? null : "needs node on the PATH")("a GET or HEAD delivery carries its body, as the signature's body claim says", async () => {
  const direct: Verdict[] = [];
  const url = await startReceiver({}, direct);
  const published: Record<string, string> = {};
  for (const method of ["GET", "HEAD"]) {
    const res = await s.api(`/v2/publish/${url}/lookup/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", "Svc-Method": method, "Svc-Retries": "0" },
      body: JSON.stringify({ query: "orders", method }),
    });
    expect(res.status).toBe(200);
    published[method] = ((await res.json()) as { messageId: string }).messageId;
  }
  await waitUntil(() => direct.length >= 2, { what: "two verdicts from the node receiver" });
  for (const method of ["GET", "HEAD"]) {
    const messageId = published[method]!;
    expect(direct.find((v) => v.messageId === messageId)).toEqual({ path: `/lookup/${method}`, messageId, verified: true, reason: null });
    expect((await waitForState(s, messageId, ["DELIVERED"])).at(-1)!.state).toBe("DELIVERED");
  }
});
