import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { base64url, signDelivery, signJwt } from "../../src/signing/jwt.ts";
import { verifySignature } from "../../src/signing/verify.js";

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

const reason = async (r: ReturnType<typeof verifySignature>) => {
  const v = await r;
  return v.ok ? "ok" : v.reason;
};
const ok = async (r: ReturnType<typeof verifySignature>) => (await r).ok;

describe("verifySignature", () => {
  test("sign then verify succeeds and returns the claims", async () => {
    const r = await verify();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.claims.iss).toBe("Svc");
      expect(r.claims.sub).toBe(URL_);
      expect(r.claims.exp).toBe(T0 / 1000 + 300);
      expect(r.claims.jti).toStartWith("jwt_");
    }
  });

  test("body may be given as a string", async () => {
    expect(await ok(verify({ body: '{"hello":"world"}' }))).toBe(true);
  });

  test("url is optional", async () => {
    expect(await ok(verify({ url: undefined }))).toBe(true);
  });

  test("wrong keys fail", async () => {
    expect(await reason(verify({ currentSigningKey: "sig_other", nextSigningKey: "sig_other2" }))).toMatch(/signing key/);
  });

  test("a token signed with the next key verifies (rotation)", async () => {
    expect(await ok(verify({ signature: signed({ key: NEXT }) }))).toBe(true);
  });

  test("the current key is tried too when next differs", async () => {
    expect(await ok(verify({ nextSigningKey: "sig_unrelated" }))).toBe(true);
    expect(await ok(verify({ currentSigningKey: "sig_unrelated", nextSigningKey: CURRENT }))).toBe(true);
  });

  test("empty keys never match a token signed with an empty key", async () => {
    const r = await verify({ signature: signed({ key: "" }), currentSigningKey: "", nextSigningKey: "" });
    expect(r.ok).toBe(false);
  });

  test("tampered body fails", async () => {
    expect(await reason(verify({ body: '{"hello":"World"}' }))).toMatch(/body hash/);
    expect(await reason(verify({ body: new Uint8Array() }))).toMatch(/body hash/);
  });

  test("empty body round-trips", async () => {
    const empty = new Uint8Array();
    expect(await ok(verify({ signature: signed({ body: empty }), body: empty }))).toBe(true);
    expect(await ok(verify({ signature: signed({ body: empty }), body: "" }))).toBe(true);
  });

  test("body hash is accepted with or without padding", async () => {
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
    expect(await ok(verify({ signature: unpadded }))).toBe(true);
  });

  test("expiry honours the tolerance (default 5 s)", async () => {
    const exp = T0 + 300_000;
    expect(await ok(verify({ nowMs: exp }))).toBe(true);
    expect(await ok(verify({ nowMs: exp + 5_000 }))).toBe(true);
    expect(await reason(verify({ nowMs: exp + 5_001 }))).toMatch(/expired/);
    expect(await reason(verify({ nowMs: exp + 1_000, clockToleranceSec: 0 }))).toMatch(/expired/);
    expect(await ok(verify({ nowMs: exp + 60_000, clockToleranceSec: 120 }))).toBe(true);
  });

  test("not-before honours the tolerance", async () => {
    expect(await ok(verify({ nowMs: T0 - 5_000 }))).toBe(true);
    expect(await reason(verify({ nowMs: T0 - 5_001 }))).toMatch(/not valid yet/);
  });

  test("nowMs defaults to the wall clock", async () => {
    const fresh = signed({ nowMs: Date.now() });
    expect(await ok(verify({ signature: fresh, nowMs: undefined }))).toBe(true);
    expect(await reason(verify({ nowMs: undefined }))).toMatch(/expired/);
  });

  test("wrong sub fails", async () => {
    expect(await reason(verify({ url: "https://example.com/other" }))).toMatch(/subject/);
    expect(await reason(verify({ url: `${URL_}/` }))).toMatch(/subject/);
  });

  test("issuer defaults to Svc and can be overridden", async () => {
    expect(await reason(verify({ issuer: "Other" }))).toMatch(/issuer/);
    const custom = signed({ issuer: "Other" });
    expect(await reason(verify({ signature: custom }))).toMatch(/issuer/);
    expect(await ok(verify({ signature: custom, issuer: "Other" }))).toBe(true);
  });

  test("a validly signed token with missing or mistyped claims fails", async () => {
    const noBody = signJwt({ iss: "Svc", sub: URL_, iat: T0 / 1000, nbf: T0 / 1000, exp: T0 / 1000 + 300, jti: "j" }, CURRENT);
    expect(await reason(verify({ signature: noBody }))).toMatch(/claims/);
    const stringExp = signJwt(
      { iss: "Svc", sub: URL_, iat: T0 / 1000, nbf: T0 / 1000, exp: "9999999999", jti: "j", body: "x" },
      CURRENT,
    );
    expect(await reason(verify({ signature: stringExp }))).toMatch(/claims/);
  });

  test("alg other than HS256 is refused", async () => {
    const [, p = ""] = signed().split(".");
    const h = base64url('{"alg":"none","typ":"JWT"}');
    const s = createHmac("sha256", CURRENT).update(`${h}.${p}`).digest("base64url");
    expect(await ok(verify({ signature: `${h}.${p}.${s}` }))).toBe(false);
    expect(await ok(verify({ signature: `${h}.${p}.` }))).toBe(false);
  });

  test("never throws on malformed input", async () => {
    for (const sig of ["", "a.b.c", "...", "x".repeat(5000), "eyJhbGciOiJIUzI1NiJ9.e30.@@@"]) {
      expect(await reason(verify({ signature: sig }))).toMatch(/well-formed/);
    }
    const wild = await verifySignature({
      signature: undefined as unknown as string,
      body,
      currentSigningKey: CURRENT,
      nextSigningKey: NEXT,
    });
    expect(wild.ok).toBe(false);
  });

  test("tampered claims or MAC fail; a token signed with another key fails", async () => {
    const token = signed();
    const [h, p = "", mac = ""] = token.split(".");
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const forged = `${h}.${base64url(JSON.stringify({ ...claims, sub: "https://attacker.example" }))}.${mac}`;
    expect(await reason(verify({ signature: forged, url: undefined }))).toMatch(/signing key/);
    const flipped = mac.startsWith("A") ? `B${mac.slice(1)}` : `A${mac.slice(1)}`;
    expect(await reason(verify({ signature: `${h}.${p}.${flipped}` }))).toMatch(/signing key/);
    expect(await ok(verify({ signature: `${token}AA` }))).toBe(false);
  });

  test("malformed segments are refused, never decoded leniently", async () => {
    const [h = "", p = "", mac = ""] = signed().split(".");
    for (const bad of [`${h}.${p}`, `${signed()}.x`, `${h}.${p}.${mac}!`, `${h}.${base64url("not json")}.${mac}`, `${h}.${base64url("[1,2]")}.${mac}`, `${h}.${base64url(new Uint8Array([0xff, 0xfe]))}.${mac}`, `${h}+.${p}.${mac}`]) {
      expect(await reason(verify({ signature: bad }))).toMatch(/well-formed/);
    }
  });

  test("uses Web Crypto and standard globals only, and imports nothing, so it runs on any runtime", async () => {
    const src = await Bun.file(new URL("../../src/signing/verify.js", import.meta.url)).text();
    expect(src).not.toMatch(/^\s*import\s|\bimport\(|\brequire\(/m);
    expect(src).not.toMatch(/\b(Bun|Buffer|process)\./);
  });
});
