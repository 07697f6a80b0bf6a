/**
 * Regions (issue 24 item 3): every delivery names the region svcd answers as (`Upstash-Region`,
 * `Svc-Region` in the svc dialect). The official Receiver, configured the multi-region way
 * (`QSTASH_REGION` and `<REGION>_QSTASH_CURRENT_SIGNING_KEY` / `_NEXT_`, no default keys), picks
 * its keys by that header and verifies the delivery.
 */
import { Client, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver as TestReceiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let rx: TestReceiver;
beforeAll(async () => {
  rx = await startReceiver(() => new Response("ok"));
});
afterAll(() => rx.stop());

/** Runs `body` with these environment variables set (and the default signing keys unset), then restores them. */
async function withEnvironment<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const names = [...Object.keys(vars), "QSTASH_CURRENT_SIGNING_KEY", "QSTASH_NEXT_SIGNING_KEY"];
  const saved = new Map(names.map((n) => [n, process.env[n]]));
  delete process.env.QSTASH_CURRENT_SIGNING_KEY;
  delete process.env.QSTASH_NEXT_SIGNING_KEY;
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const [n, v] of saved) {
      if (v === undefined) delete process.env[n];
      else process.env[n] = v;
    }
  }
}

describe("upstash dialect, default region", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ config: { dialect: "upstash" } });
  });
  afterAll(() => s.stop());

  test("a delivery carries Upstash-Region: US-EAST-1, and the Receiver set up by QSTASH_REGION verifies it", async () => {
    const client = new Client({ baseUrl: s.url, token: s.token, retry: false });
    const keys = (await client.http.request({ method: "GET", path: ["v2", "keys"] })) as { current: string; next: string };
    await client.publish({ url: `${rx.url}/regional`, body: "signed body" });
    await flush(s.api);
    const d = rx.received.find((r) => r.path === "/regional")!;
    const region = d.headers.get("upstash-region");
    expect(region).toBe("US-EAST-1");
    const signature = d.headers.get("upstash-signature")!;
    const request = { signature, body: d.text, url: `${rx.url}/regional`, upstashRegion: region ?? undefined };

    await withEnvironment(
      { QSTASH_REGION: "US_EAST_1", US_EAST_1_QSTASH_CURRENT_SIGNING_KEY: keys.current, US_EAST_1_QSTASH_NEXT_SIGNING_KEY: keys.next },
      async () => {
        expect(await new Receiver().verify(request)).toBe(true);
        // Without the header the Receiver has no keys to pick (what users met before svcd sent it).
        await expect(new Receiver().verify({ ...request, upstashRegion: undefined })).rejects.toThrow(/No signing keys/);
        await expect(new Receiver().verify({ ...request, body: "tampered" })).rejects.toThrow();
      },
    );
    // Keys of another region do not verify it.
    await withEnvironment(
      { QSTASH_REGION: "US_EAST_1", US_EAST_1_QSTASH_CURRENT_SIGNING_KEY: "sig_other", US_EAST_1_QSTASH_NEXT_SIGNING_KEY: "sig_other2" },
      async () => {
        await expect(new Receiver().verify(request)).rejects.toThrow();
      },
    );
  });
});

describe("--region", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ config: { dialect: "svc", region: "EU-CENTRAL-1" } });
  });
  afterAll(() => s.stop());

  test("svc dialect: the delivery names the configured region in Svc-Region", async () => {
    const res = await s.api(`/v2/publish/${rx.url}/eu`, { method: "POST", body: "x" });
    expect(res.status).toBe(200);
    await flush(s.api);
    const d = rx.received.find((r) => r.path === "/eu")!;
    expect(d.headers.get("svc-region")).toBe("EU-CENTRAL-1");
    expect(d.headers.get("upstash-region")).toBeNull();
  });
});
