import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { base64url, signDelivery, signJwt } from "../../src/signing/jwt.ts";
import { verifySignature } from "../../src/signing/verify.ts";

const CURRENT = "sig_currentKeyAAAAAAAAAAAAAAAAA";
const NEXT = "sig_nextKeyBBBBBBBBBBBBBBBBBBBBBB";
const URL_ = "https://example.com/api/hook";
const T0 = 1_725_323_658_000;
const body = new TextEncoder().encode('{"hello":"world"}');

const signed = (over: Partial<Parameters<typeof signDelivery>[0]> = {}) =>
  signDelivery({ key: CURRENT, issuer: "Svc", url: URL_, body, nowMs: T0, ...over });

const verify = (over: Partial<Parameters<typeof verifySignature>[0]> = {}) =>
  verifySignature({
    signature: signed(),
    body,
    currentSigningKey: CURRENT,
    nextSigningKey: NEXT,
    url: URL_,
    nowMs: T0 + 1_000,
    ...over,
  });

const reason = (r: ReturnType<typeof verifySignature>) => (r.ok ? "ok" : r.reason);

describe("verifySignature", () => {
  test("sign then verify succeeds and returns the claims", () => {
    const r = verify();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.claims.iss).toBe("Svc");
      expect(r.claims.sub).toBe(URL_);
      expect(r.claims.exp).toBe(T0 / 1000 + 300);
      expect(r.claims.jti).toStartWith("jwt_");
    }
  });

  test("body may be given as a string", () => {
    expect(verify({ body: '{"hello":"world"}' }).ok).toBe(true);
  });

  test("url is optional", () => {
    expect(verify({ url: undefined }).ok).toBe(true);
  });

  test("wrong keys fail", () => {
    expect(reason(verify({ currentSigningKey: "sig_other", nextSigningKey: "sig_other2" }))).toMatch(/signing key/);
  });

  test("a token signed with the next key verifies (rotation)", () => {
    expect(verify({ signature: signed({ key: NEXT }) }).ok).toBe(true);
  });

  test("the current key is tried too when next differs", () => {
    expect(verify({ nextSigningKey: "sig_unrelated" }).ok).toBe(true);
    expect(verify({ currentSigningKey: "sig_unrelated", nextSigningKey: CURRENT }).ok).toBe(true);
  });

  test("empty keys never match a token signed with an empty key", () => {
    const r = verify({ signature: signed({ key: "" }), currentSigningKey: "", nextSigningKey: "" });
    expect(r.ok).toBe(false);
  });

  test("tampered body fails", () => {
    expect(reason(verify({ body: '{"hello":"World"}' }))).toMatch(/body hash/);
    expect(reason(verify({ body: new Uint8Array() }))).toMatch(/body hash/);
  });

  test("empty body round-trips", () => {
    const empty = new Uint8Array();
    expect(verify({ signature: signed({ body: empty }), body: empty }).ok).toBe(true);
    expect(verify({ signature: signed({ body: empty }), body: "" }).ok).toBe(true);
  });

  test("body hash is accepted with or without padding", () => {
    const unpadded = signJwt(
      {
        iss: "Svc",
        sub: URL_,
        iat: T0 / 1000,
        nbf: T0 / 1000,
        exp: T0 / 1000 + 300,
        jti: "jwt_x",
        body: base64url(new Bun.CryptoHasher("sha256").update(body).digest()),
      },
      CURRENT,
    );
    expect(verify({ signature: unpadded }).ok).toBe(true);
  });

  test("expiry honours the tolerance (default 5 s)", () => {
    const exp = T0 + 300_000;
    expect(verify({ nowMs: exp }).ok).toBe(true);
    expect(verify({ nowMs: exp + 5_000 }).ok).toBe(true);
    expect(reason(verify({ nowMs: exp + 5_001 }))).toMatch(/expired/);
    expect(reason(verify({ nowMs: exp + 1_000, clockToleranceSec: 0 }))).toMatch(/expired/);
    expect(verify({ nowMs: exp + 60_000, clockToleranceSec: 120 }).ok).toBe(true);
  });

  test("not-before honours the tolerance", () => {
    expect(verify({ nowMs: T0 - 5_000 }).ok).toBe(true);
    expect(reason(verify({ nowMs: T0 - 5_001 }))).toMatch(/not valid yet/);
  });

  test("nowMs defaults to the wall clock", () => {
    const fresh = signed({ nowMs: Date.now() });
    expect(verify({ signature: fresh, nowMs: undefined }).ok).toBe(true);
    expect(reason(verify({ nowMs: undefined }))).toMatch(/expired/);
  });

  test("wrong sub fails", () => {
    expect(reason(verify({ url: "https://example.com/other" }))).toMatch(/subject/);
    expect(reason(verify({ url: `${URL_}/` }))).toMatch(/subject/);
  });

  test("issuer defaults to Svc and can be overridden", () => {
    expect(reason(verify({ issuer: "Other" }))).toMatch(/issuer/);
    const custom = signed({ issuer: "Other" });
    expect(reason(verify({ signature: custom }))).toMatch(/issuer/);
    expect(verify({ signature: custom, issuer: "Other" }).ok).toBe(true);
  });

  test("a validly signed token with missing or mistyped claims fails", () => {
    const noBody = signJwt({ iss: "Svc", sub: URL_, iat: T0 / 1000, nbf: T0 / 1000, exp: T0 / 1000 + 300, jti: "j" }, CURRENT);
    expect(reason(verify({ signature: noBody }))).toMatch(/claims/);
    const stringExp = signJwt(
      { iss: "Svc", sub: URL_, iat: T0 / 1000, nbf: T0 / 1000, exp: "9999999999", jti: "j", body: "x" },
      CURRENT,
    );
    expect(reason(verify({ signature: stringExp }))).toMatch(/claims/);
  });

  test("alg other than HS256 is refused", () => {
    const [, p = ""] = signed().split(".");
    const h = base64url('{"alg":"none","typ":"JWT"}');
    const s = createHmac("sha256", CURRENT).update(`${h}.${p}`).digest("base64url");
    expect(verify({ signature: `${h}.${p}.${s}` }).ok).toBe(false);
    expect(verify({ signature: `${h}.${p}.` }).ok).toBe(false);
  });

  test("never throws on malformed input", () => {
    for (const sig of ["", "a.b.c", "...", "x".repeat(5000), "eyJhbGciOiJIUzI1NiJ9.e30.@@@"]) {
      const r = verify({ signature: sig });
      expect(r.ok).toBe(false);
      expect(reason(r)).toMatch(/well-formed/);
    }
    const wild = verifySignature({
      signature: undefined as unknown as string,
      body,
      currentSigningKey: CURRENT,
      nextSigningKey: NEXT,
    });
    expect(wild.ok).toBe(false);
  });

  test("imports nothing but ./jwt.ts, so users can copy it", async () => {
    const src = await Bun.file(new URL("../../src/signing/verify.ts", import.meta.url)).text();
    const imports = [...src.matchAll(/from\s+["']([^"']+)["']/g)].map((m) => m[1]);
    expect(imports).toEqual(["./jwt.ts"]);
  });
});
