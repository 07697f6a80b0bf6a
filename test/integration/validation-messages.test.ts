import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/** Every route's validation failure reads `<field>: <what is wrong>`, whichever API and part of the request. */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ config: { clock: "manual" } });
});
afterAll(() => s.stop());

const errorOf = async (res: Response) => {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string };
  expect(Object.keys(body)).toEqual(["error"]);
  return body.error;
};
const json = (method: string, body: unknown) => ({ method, body: JSON.stringify(body), headers: { "content-type": "application/json" } });

test("a body field of the wrong type: named, with what it must be (it used to say `should be one of: 'integer', 'integer'`)", async () => {
  expect(await errorOf(await s.api("/__svc/clock/advance", json("POST", { ms: "soon" })))).toBe("ms: must be an integer of at least 0");
  expect(await errorOf(await s.api("/__svc/clock/advance", json("POST", { ms: -5 })))).toBe("ms: must be an integer of at least 0");
});

test("a query value: named, with its range, also when it is a number out of range", async () => {
  expect(await errorOf(await s.api("/__svc/flush?timeout=abc", { method: "POST" }))).toBe("timeout: must be a number from 1 to 600000");
  expect(await errorOf(await s.api("/__svc/flush?timeout=0", { method: "POST" }))).toBe("timeout: must be a number from 1 to 600000");
  expect(await errorOf(await s.api("/__svc/clock/advance?flush=maybe", json("POST", { ms: 1 })))).toBe("flush: must be true or false");
});

test("management bodies: required, unknown and enumerated fields", async () => {
  const create = (body: unknown) => s.mgmt("/v2/search", json("POST", body));
  expect(await errorOf(await create({ region: "eu-west-1", type: "payg" }))).toBe("name: is required");
  expect(await errorOf(await create({ name: "a", region: "eu-west-1", type: "payg", extra: 1 }))).toBe("extra: is not a known field");
  expect(await errorOf(await create({ name: "a", region: "mars", type: "payg" }))).toStartWith("region: must be one of eu-west-1");
  expect(await errorOf(await create([]))).toBe("body: must be a JSON object");
});

test("a JSON body sent as a form or as text (curl -d without its Content-Type): the answer says so", async () => {
  const hint = (type: string) => ` (the body was read as ${type}: send JSON with Content-Type: application/json)`;
  const asForm = { method: "POST", body: JSON.stringify({ queueName: "emails" }), headers: { "content-type": "application/x-www-form-urlencoded" } };
  expect(await errorOf(await s.api("/v2/queues", asForm))).toBe("queueName: is required" + hint("application/x-www-form-urlencoded"));
  const asText = { method: "POST", body: JSON.stringify([{ destination: "http://127.0.0.1:9/x" }]), headers: { "content-type": "text/plain" } };
  expect(await errorOf(await s.api("/v2/batch", asText))).toBe("body: must be a list" + hint("text/plain"));
  expect(await errorOf(await s.mgmt("/v2/search", { ...asForm, body: JSON.stringify({ name: "a" }) }))).toStartWith("name: is required (the body was read as");
  // A body that was JSON, or a route that reads JSON whatever the type, gets no such note.
  expect(await errorOf(await s.api("/v2/queues", json("POST", { parallelism: 1 })))).toBe("queueName: is required");
  expect(await errorOf(await s.api("/__svc/clock/advance", { ...asForm, body: '{"ms":"soon"}' }))).toBe("ms: must be an integer of at least 0");
});

test("an unauthenticated request with a bad body is refused for its credentials first", async () => {
  const res = await s.mgmt("/v2/search", { ...json("POST", { nope: 1 }), noAuth: true });
  expect(res.status).toBe(401);
});
