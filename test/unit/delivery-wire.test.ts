import { expect, test } from "bun:test";
import { packJobs, packOutcomes, unpackJobs, unpackOutcomes } from "../../src/delivery/wire.ts";
import type { DeliveryJob } from "../../src/delivery/worker-protocol.ts";
import type { DeliveryOutcome } from "../../src/model/outcome.ts";

const job = (ticket: number, body: Uint8Array): DeliveryJob => ({
  ticket,
  messageId: `msg_${ticket}`,
  url: `http://127.0.0.1:9/${ticket}?a=1&b=ü`,
  method: "POST",
  headers: [["Content-Type", "application/json"], ["Svc-Retried", "0"]],
  body,
  timeoutMs: 30_000,
  signingKey: "sig_key",
  issuer: "Svc",
  signatureHeader: "Svc-Signature",
  maxResponseBytes: 1 << 20,
  headersOf2xx: ticket % 2 === 0,
  flow: ticket === 2 ? { key: "acct\0k", parallelism: 1, periodMs: 1000 } : undefined,
});

test("a batch of jobs arrives whole: every field, each body byte for byte, in order", () => {
  const bodies = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new TextEncoder().encode("x".repeat(5000)), new Uint8Array([0, 255])];
  const jobs = bodies.map((b, i) => job(i + 1, b));
  const packed = packJobs(jobs);
  expect(packed.bodies.byteLength).toBe(3 + 0 + 5000 + 2);
  // What the worker gets after the buffer moved to it (a copy here stands for the transfer).
  const received = unpackJobs({ text: packed.text, bodies: packed.bodies.slice(0) });
  expect(received).toHaveLength(4);
  received.forEach((r, i) => {
    const { body, ...rest } = jobs[i]!;
    const { body: got, ...gotRest } = r;
    expect(gotRest).toEqual(JSON.parse(JSON.stringify(rest)));
    expect([...got]).toEqual([...body]);
  });
});

test("packing leaves the caller's records as they were", () => {
  const body = new Uint8Array([7, 8, 9]);
  const jobs = [job(1, body)];
  packJobs(jobs);
  expect(jobs[0]!.body).toBe(body);
});

test("outcomes with and without an answer body or headers", () => {
  const outcomes: DeliveryOutcome[] = [
    { ticket: 1, messageId: "m1", status: 200, body: new TextEncoder().encode("ok"), startedAt: 5, durationMs: 1.5 },
    { ticket: 2, messageId: "m2", error: "timeout: no complete answer within 10 ms", startedAt: 6, durationMs: 10 },
    { ticket: 3, messageId: "m3", status: 500, headers: [["retry-after", "2"]], body: new Uint8Array(0), startedAt: 7, durationMs: 2 },
  ];
  const packed = packOutcomes(outcomes);
  const back = unpackOutcomes({ text: packed.text, bodies: packed.bodies.slice(0) });
  expect(new TextDecoder().decode(back[0]!.body)).toBe("ok");
  expect(back[0]!.headers).toBeUndefined();
  expect(back[1]).toEqual({ ticket: 2, messageId: "m2", error: "timeout: no complete answer within 10 ms", startedAt: 6, durationMs: 10 });
  expect(back[2]!.headers).toEqual([["retry-after", "2"]]);
  expect(back[2]!.body!.byteLength).toBe(0);
});
