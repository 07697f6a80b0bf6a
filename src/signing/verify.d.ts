/** The claims of a delivery signature (a JWT, HS256). */
export interface DeliveryClaims {
  /** `Svc`, or `Upstash` in the upstash dialect. */
  iss: string;
  /** The exact URL svcd delivered to. */
  sub: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  /** base64url SHA-256 of the raw body. */
  body: string;
}

export type VerifyResult = { ok: true; claims: DeliveryClaims } | { ok: false; reason: string };

export interface VerifyOptions {
  /** The `Svc-Signature` (or `Upstash-Signature`) header. */
  signature: string;
  /** The raw request body, exactly as received. */
  body: Uint8Array | string;
  currentSigningKey: string;
  nextSigningKey: string;
  /** When given, the signature's `sub` must be exactly this URL. */
  url?: string;
  /** `Svc` by default; `Upstash` in the upstash dialect. */
  issuer?: string;
  /** Defaults to the wall clock: receivers verify at the moment a request arrives. */
  nowMs?: number;
  /** Allowed clock difference in seconds (default 5). */
  clockToleranceSec?: number;
}

/** Never rejects: malformed input resolves to `{ ok: false, reason }`. */
export function verifySignature(opts: VerifyOptions): Promise<VerifyResult>;

/** For fetch-style requests: reads the raw body, the signature header and the request URL. */
export function verifyRequest(
  request: Request,
  opts: Omit<VerifyOptions, "signature" | "body" | "url"> & { url?: string },
): Promise<VerifyResult>;
