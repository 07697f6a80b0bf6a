import { describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { base64url, signDelivery, signJwt } from "../../src/signing/jwt.ts";

const enc = new TextEncoder();
const decodeSegment = (s: string) => Buffer.from(s, "base64url").toString("utf8");
const claimsOf = (token: string) => JSON.parse(decodeSegment(token.split(".")[1] ?? "")) as Record<string, unknown>;
/** The token's MAC is HMAC-SHA256 of its first two segments under `key`. */
const signedWith = (token: string, key: string) => {
  const [h, p, s] = token.split(".");
  return s === createHmac("sha256", key).update(`${h}.${p}`).digest("base64url");
};
const KEY = "sig_4kQzTnX9mBvP2yRcWd7LhJsEaGf";

describe("base64url", () => {
  test("url-safe alphabet, unpadded by default", () => {
    expect(base64url(new Uint8Array([0xfb, 0xff]))).toBe("-_8");
    expect(base64url(new Uint8Array([0xfb, 0xff]), true)).toBe("-_8=");
    expect(base64url("a")).toBe("YQ");
    expect(base64url("a", true)).toBe("YQ==");
    expect(base64url("abc", true)).toBe("YWJj");
    expect(base64url("")).toBe("");
  });

  test("strings are UTF-8 encoded", () => {
    expect(base64url("é")).toBe("w6k");
  });

  test("respects subarray views", () => {
    const whole = new Uint8Array([1, 2, 3, 4]);
    expect(base64url(whole.subarray(2))).toBe(base64url(new Uint8Array([3, 4])));
  });
});

describe("signJwt", () => {
  test("header segment is exactly the fixed HS256 header", () => {
    const [header = ""] = signJwt({ a: 1 }, KEY).split(".");
    expect(decodeSegment(header)).toBe('{"alg":"HS256","typ":"JWT"}');
  });

  test("segments are unpadded base64url", () => {
    const token = signJwt({ sub: "https://example.com/?q=1&x=~" }, KEY);
    expect(token.split(".")).toHaveLength(3);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  test("HMAC matches node:crypto", () => {
    const token = signJwt({ iss: "Svc", n: 42 }, KEY);
    const [h, p, s] = token.split(".");
    const expected = createHmac("sha256", KEY).update(`${h}.${p}`).digest("base64url");
    expect(s).toBe(expected);
  });
});

describe("signDelivery", () => {
  const nowMs = 1_725_323_658_779;
  const sign = (body: Uint8Array, jti?: string) =>
    signDelivery({ key: KEY, issuer: "Svc", url: "https://example.com/hook?a=1", body, nowMs, jti });

  test("claims are exactly the documented set", () => {
    const claims = claimsOf(sign(enc.encode("hello"), "jwt_fixed"));
    expect(claims).toEqual({
      iss: "Svc",
      sub: "https://example.com/hook?a=1",
      iat: 1_725_323_658,
      nbf: 1_725_323_658,
      exp: 1_725_323_958,
      jti: "jwt_fixed",
      body: createHash("sha256").update("hello").digest("base64url") + "=",
    });
  });

  test("body claim of an empty body", () => {
    expect(claimsOf(sign(new Uint8Array())).body).toBe("47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=");
  });

  test("body hash covers raw bytes, not text", () => {
    const raw = new Uint8Array([0xff, 0x00, 0x80]);
    const expected = createHash("sha256").update(raw).digest("base64url") + "=";
    expect(claimsOf(sign(raw)).body).toBe(expected);
  });

  test("signed with the key, HMAC as node:crypto computes it", () => {
    const token = sign(enc.encode("x"));
    const [h, p, s] = token.split(".");
    expect(s).toBe(createHmac("sha256", KEY).update(`${h}.${p}`).digest("base64url"));
    expect(decodeSegment(h ?? "")).toBe('{"alg":"HS256","typ":"JWT"}');
  });

  test("claims text is JSON.stringify's, for any issuer and URL, one after another", () => {
    const cases = [
      { issuer: "Svc", url: "https://example.com/hook?a=1" },
      { issuer: 'Up"stash\\', url: "https://例え.jp/パス?q=ü&x=\u2028" },
      { issuer: "Svc", url: "https://example.com/other" },
      { issuer: "Svc", url: "https://example.com/hook?a=1" },
    ];
    for (const { issuer, url } of cases) {
      const token = signDelivery({ key: KEY, issuer, url, body: enc.encode("b"), nowMs, jti: 'jwt_"odd"' });
      const payload = token.split(".")[1] ?? "";
      const iat = Math.floor(nowMs / 1000);
      const body = createHash("sha256").update("b").digest("base64url") + "=";
      const expected = { iss: issuer, sub: url, iat, nbf: iat, exp: iat + 300, jti: 'jwt_"odd"', body };
      expect(decodeSegment(payload)).toBe(JSON.stringify(expected));
      expect(signedWith(token, KEY)).toBe(true);
    }
  });

  test("each key signs with its own HMAC, keys taking turns", () => {
    const other = "sig_other9mBvP2yRcWd7LhJsEaGfQ";
    for (const key of [KEY, other, KEY, other]) {
      const token = signDelivery({ key, issuer: "Svc", url: "https://w", body: new Uint8Array(), nowMs });
      expect(signedWith(token, key)).toBe(true);
    }
  });

  test("random jti: jwt_ + 24 base58 chars, different each time", () => {
    const jtis = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const jti = claimsOf(sign(new Uint8Array())).jti;
      expect(jti).toMatch(/^jwt_[1-9A-HJ-NP-Za-km-z]{24}$/);
      jtis.add(String(jti));
    }
    expect(jtis.size).toBe(50);
  });

  test("works inside a Bun Worker", async () => {
    const modulePath = new URL("../../src/signing/jwt.ts", import.meta.url).href;
    const source = `
      import { signDelivery } from ${JSON.stringify(modulePath)};
      self.onmessage = (e) => postMessage(signDelivery({ key: e.data, issuer: "Svc", url: "https://w", body: new Uint8Array(), nowMs: 0, jti: "jwt_w" }));
    `;
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "application/javascript" })));
    try {
      const token = await new Promise<string>((resolve, reject) => {
        worker.onmessage = (e: MessageEvent<string>) => resolve(e.data);
        worker.onerror = (e) => reject(new Error(e.message));
        worker.postMessage(KEY);
      });
      expect(token).toBe(
        signDelivery({ key: KEY, issuer: "Svc", url: "https://w", body: new Uint8Array(), nowMs: 0, jti: "jwt_w" }),
      );
      expect(signedWith(token, KEY)).toBe(true);
    } finally {
      worker.terminate();
    }
  });
});
