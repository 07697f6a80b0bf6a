import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { verifySignature } from "../../src/signing/verify.js";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer } from "../helpers/server.ts";

test("with a manual clock a day ahead, signatures still carry real time and verify at the receiver", async () => {
  const clock = new ManualClock(Date.now());
  const s = await startTestServer({ clock });
  const rx = await startReceiver();
  try {
    clock.advanceTo(clock.now() + 24 * 3600 * 1000);
    const sentAfter = Math.floor(Date.now() / 1000);
    const res = await s.api(`/v2/publish/${rx.url}/signed`, { method: "POST", body: "later" });
    expect(res.status).toBe(200);
    const [got] = await rx.waitFor(1);
    const account = s.ctx.accounts.all()[0]!;
    const verdict = await verifySignature({
      signature: got!.headers.get("svc-signature")!,
      body: got!.body,
      currentSigningKey: account.currentSigningKey,
      nextSigningKey: account.nextSigningKey,
      url: got!.url,
    });
    expect(verdict).toMatchObject({ ok: true });
    // Signed between the publish and the arrival by real time (seconds), not a day ahead.
    if (verdict.ok) {
      expect(verdict.claims.iat).toBeGreaterThanOrEqual(sentAfter);
      expect(verdict.claims.iat).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    }
  } finally {
    rx.stop();
    await s.stop();
  }
});
