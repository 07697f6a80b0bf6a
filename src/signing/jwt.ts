/**
 * Signing of deliveries: a minimal HS256 JWT. Synchronous (Bun.CryptoHasher) so it works the same
 * on the main thread and in delivery workers without awaiting WebCrypto for every message.
 * Receivers check it with ./verify.js, which runs on any runtime.
 */

import { randomBase58 } from "../core/ids.ts";

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

export function hmacSha256(key: string, data: Uint8Array | string): Uint8Array {
  return new Bun.CryptoHasher("sha256", key).update(toBytes(data)).digest();
}

export function sha256(data: Uint8Array | string): Uint8Array {
  return new Bun.CryptoHasher("sha256").update(toBytes(data)).digest();
}

export function signJwt(claims: Record<string, unknown>, key: string): string {
  const signingInput = `${JWT_HEADER_SEGMENT}.${base64url(JSON.stringify(claims))}`;
  return `${signingInput}.${hmacSha256Base64url(key, signingInput)}`;
}

const JWT_HEADER_SEGMENT = base64url(JWT_HEADER);

/**
 * HMAC and hash straight to base64url text: every delivery attempt signs, and going through a
 * byte array and a Buffer view of it cost more than the hashing.
 */
function hmacSha256Base64url(key: string, data: string): string {
  return new Bun.CryptoHasher("sha256", key).update(data).digest("base64url" as "base64");
}

/** The `body` claim: base64url of the SHA-256 of the body, with its `=` padding. */
function bodyHashClaim(body: Uint8Array): string {
  return `${Bun.SHA256.hash(body, "base64url" as "base64")}=`;
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
    body: bodyHashClaim(opts.body),
  };
  return signJwt(claims, opts.key);
}
