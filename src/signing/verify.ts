/**
 * Receiver-side check of the `Svc-Signature` header. Users copy this file together with ./jwt.ts
 * into their own services, so it must not import anything else from svcd.
 */
import { base64url, constantTimeEqual, decodeJwt, sha256, verifyJwtSignature } from "./jwt.ts";

export interface DeliveryClaims {
  iss: string;
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  body: string;
}

export type VerifyResult = { ok: true; claims: DeliveryClaims } | { ok: false; reason: string };

export interface VerifyOptions {
  signature: string;
  body: Uint8Array | string;
  currentSigningKey: string;
  nextSigningKey: string;
  /** When given, the token's `sub` must be exactly this URL. */
  url?: string;
  issuer?: string;
  /** Defaults to the wall clock: receivers normally verify at the moment a request arrives. */
  nowMs?: number;
  clockToleranceSec?: number;
}

/** Never throws: any malformed input yields `{ ok: false, reason }`. */
export function verifySignature(opts: VerifyOptions): VerifyResult {
  try {
    return check(opts);
  } catch (err) {
    return { ok: false, reason: `cannot verify signature: ${String(err)}` };
  }
}

function check(opts: VerifyOptions): VerifyResult {
  const decoded = decodeJwt(opts.signature);
  if (decoded === undefined) return { ok: false, reason: "signature is not a well-formed JWT" };
  // The next key is accepted too so that deliveries signed just before a key rotation still pass.
  const keys = [opts.currentSigningKey, opts.nextSigningKey].filter((k) => k !== "");
  if (!keys.some((k) => verifyJwtSignature(opts.signature, k))) {
    return { ok: false, reason: "signature does not match the current or next signing key" };
  }
  const claims = asDeliveryClaims(decoded.claims);
  if (claims === undefined) return { ok: false, reason: "signature claims are missing or of the wrong type" };

  const issuer = opts.issuer ?? "Svc";
  if (claims.iss !== issuer) return { ok: false, reason: `issuer is "${claims.iss}", expected "${issuer}"` };
  if (opts.url !== undefined && claims.sub !== opts.url) {
    return { ok: false, reason: `subject is "${claims.sub}", expected "${opts.url}"` };
  }
  const nowSec = (opts.nowMs ?? Date.now()) / 1000;
  const tolerance = opts.clockToleranceSec ?? 5;
  if (nowSec > claims.exp + tolerance) return { ok: false, reason: "signature has expired" };
  if (nowSec < claims.nbf - tolerance) return { ok: false, reason: "signature is not valid yet" };

  // Compared without padding: signers differ on whether the body hash keeps its trailing "=".
  const expected = base64url(sha256(opts.body));
  const actual = claims.body.replace(/=+$/, "");
  if (!constantTimeEqual(new TextEncoder().encode(expected), new TextEncoder().encode(actual))) {
    return { ok: false, reason: "body hash does not match the signed body" };
  }
  return { ok: true, claims };
}

function asDeliveryClaims(c: Record<string, unknown>): DeliveryClaims | undefined {
  const { iss, sub, iat, nbf, exp, jti, body } = c;
  if (typeof iss !== "string" || typeof sub !== "string" || typeof jti !== "string" || typeof body !== "string") {
    return undefined;
  }
  if (typeof iat !== "number" || typeof nbf !== "number" || typeof exp !== "number") return undefined;
  return { iss, sub, iat, nbf, exp, jti, body };
}
