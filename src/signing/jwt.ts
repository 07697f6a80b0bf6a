/**
 * Minimal HS256 JWT. Synchronous (Bun.CryptoHasher) so it works the same on the main thread and in
 * delivery workers without awaiting WebCrypto for every message. verify.ts builds on this file only.
 */

const JWT_HEADER = '{"alg":"HS256","typ":"JWT"}';
const encoder = new TextEncoder();

function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

/** base64url alphabet; JWT segments are unpadded, but the `body` claim keeps its `=` padding. */
export function base64url(bytes: Uint8Array | string, pad = false): string {
  const b = toBytes(bytes);
  const text = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64url");
  return pad ? text.padEnd(Math.ceil(text.length / 4) * 4, "=") : text;
}

/** Strict: Buffer's decoder silently skips foreign characters, which would hide tampering. */
function fromBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(text, "base64url"));
}

export function hmacSha256(key: string, data: Uint8Array | string): Uint8Array {
  return new Bun.CryptoHasher("sha256", key).update(toBytes(data)).digest();
}

export function sha256(data: Uint8Array | string): Uint8Array {
  return new Bun.CryptoHasher("sha256").update(toBytes(data)).digest();
}

/** Runs in time independent of where the first difference is, so a signature cannot be guessed bytewise. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

export function signJwt(claims: Record<string, unknown>, key: string): string {
  const signingInput = `${base64url(JWT_HEADER)}.${base64url(JSON.stringify(claims))}`;
  return `${signingInput}.${base64url(hmacSha256(key, signingInput))}`;
}

export interface DecodedJwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signingInput: string;
  signature: Uint8Array;
}

/** Splits and parses a compact JWT without checking the signature; undefined if malformed. */
export function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  const [h = "", c = "", s = ""] = parts;
  const header = parseJsonObject(fromBase64url(h));
  const claims = parseJsonObject(fromBase64url(c));
  const signature = fromBase64url(s);
  if (header === undefined || claims === undefined || signature === undefined) return undefined;
  return { header, claims, signingInput: `${h}.${c}`, signature };
}

function parseJsonObject(bytes: Uint8Array | undefined): Record<string, unknown> | undefined {
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** True only for a well-formed HS256 token whose HMAC matches `key`; other `alg` values are refused. */
export function verifyJwtSignature(token: string, key: string): boolean {
  const decoded = decodeJwt(token);
  if (decoded === undefined || decoded.header.alg !== "HS256") return false;
  return constantTimeEqual(hmacSha256(key, decoded.signingInput), decoded.signature);
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Uniform base58 text: bytes ≥ 232 (4 × 58) are discarded so no letter is favoured. */
function randomBase58(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 232 && out.length < length) out += BASE58[byte % 58];
    }
  }
  return out;
}

export const SIGNATURE_TTL_SEC = 300;

/** The `Svc-Signature` value for one delivery to `url` (the callback URL for a callback). */
export function signDelivery(opts: {
  key: string;
  issuer: string;
  url: string;
  body: Uint8Array;
  nowMs: number;
  jti?: string;
}): string {
  const iat = Math.floor(opts.nowMs / 1000);
  const claims = {
    iss: opts.issuer,
    sub: opts.url,
    iat,
    nbf: iat,
    exp: iat + SIGNATURE_TTL_SEC,
    jti: opts.jti ?? `jwt_${randomBase58(24)}`,
    body: base64url(sha256(opts.body), true),
  };
  return signJwt(claims, opts.key);
}
