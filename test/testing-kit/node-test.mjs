// A user's suite on Node's own test runner (`node --test`), importing svcd/testing by name. It
// leaves its svcd running on purpose: the kit stops it when the process exits.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { once } from "node:events";
import { startSvcd } from "svcd/testing";

let svc;
let receiverUrl;
const received = [];

before(async () => {
  svc = await startSvcd({ clock: "manual" });
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk)).on("end", () => {
      received.push(body);
      res.end("ok");
    });
  }).listen(0, "127.0.0.1");
  await once(receiver, "listening");
  receiver.unref();
  receiverUrl = `http://127.0.0.1:${receiver.address().port}`;
  console.log(`svcd pid ${svc.pid}`);
});

test("a delayed message arrives once the manual clock is advanced", async () => {
  await svc.request(`/v2/publish/${receiverUrl}/hook`, { method: "POST", body: "tick", headers: { "Svc-Delay": "10m" } });
  await svc.flush();
  assert.deepEqual(received, []);
  await svc.advance("10m");
  assert.deepEqual(received, ["tick"]);
});

test("messages() tells what happened", async () => {
  const [message] = await svc.messages();
  assert.equal(message.state, "DELIVERED");
});
