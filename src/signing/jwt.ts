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
  return signClaimsText(JSON.stringify(claims), key);
}

const JWT_HEADER_SEGMENT = base64url(JWT_HEADER);

/** The token of claims already written as JSON text: every delivery attempt signs one. */
function signClaimsText(claims: string, key: string): string {
  // Straight from the text: going through TextEncoder and a Buffer view cost twice as much.
  const signingInput = `${JWT_HEADER_SEGMENT}.${Buffer.from(claims).toString("base64url")}`;
  return `${signingInput}.${hmacSha256Base64url(key, signingInput)}`;
}

/**
 * HMAC states keyed and ready, by key: a copy of one skips the key's setup each signature. A
 * worker signs with a few keys (one per account), so the map stays small; it is emptied if not.
 */
const keyedHashers = new Map<string, Bun.CryptoHasher>();
const KEYED_HASHERS_MAX = 256;

/** HMAC and hash straight to base64url text, without a byte array and a Buffer view of it. */
function hmacSha256Base64url(key: string, data: string): string {
  let keyed = keyedHashers.get(key);
  if (keyed === undefined) {
    if (keyedHashers.size >= KEYED_HASHERS_MAX) keyedHashers.clear();
    keyed = new Bun.CryptoHasher("sha256", key);
    keyedHashers.set(key, keyed);
  }
  return keyed.copy().update(data).digest("base64url" as "base64");
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
  // The text JSON.stringify writes for {iss, sub, iat, nbf, exp, jti, body}, written directly:
  // jti and the body hash need no escaping, and a worker signs for the same issuer and URL in a row.
  const jti = opts.jti === undefined ? `"jwt_${randomBase58(24)}"` : JSON.stringify(opts.jti);
  const times = `${iat},"nbf":${iat},"exp":${iat + SIGNATURE_TTL_SEC}`;
  const claims = `${claimsHead(opts.issuer, opts.url)}${times},"jti":${jti},"body":"${bodyHashClaim(opts.body)}"}`;
  return signClaimsText(claims, opts.key);
}

let lastHead = { issuer: "", url: "", text: "" };
function claimsHead(issuer: string, url: string): string {
  if (lastHead.issuer !== issuer || lastHead.url !== url || lastHead.text === "")
    lastHead = { issuer, url, text: `{"iss":${JSON.stringify(issuer)},"sub":${JSON.stringify(url)},"iat":` };
  return lastHead.text;
}
