// Receiver-side check of svcd's delivery signature (`Svc-Signature`, or `Upstash-Signature` in the
// upstash dialect). Plain JavaScript on Web Crypto and standard globals only, so one file runs
// unchanged on Node 18+, Bun, Deno and edge runtimes; copy it into a project or import it as
// `svcd/verify`. Types: ./verify.d.ts.

const encoder = new TextEncoder();

/**
 * Checks a delivery's signature against the current and the next signing key (a delivery signed
 * just before a key rotation still passes), then the issuer, the URL, the time window and the
 * SHA-256 of the raw body. Never throws: malformed input yields `{ ok: false, reason }`.
 */
export async function verifySignature(opts) {
  try {
    return await check(opts);
  } catch (error) {
    return { ok: false, reason: `cannot verify signature: ${String(error)}` };
  }
}

/**
 * The same check for a fetch-style request (Bun, Deno, edge functions): reads the raw body
 * and takes the signature header and the URL from the request. `url` overrides the request's URL
 * (behind a proxy the receiver may see another one than svcd delivered to).
 */
export async function verifyRequest(request, opts) {
  const signature = request.headers.get("Svc-Signature") ?? request.headers.get("Upstash-Signature") ?? "";
  const body = new Uint8Array(await request.arrayBuffer());
  return verifySignature({ ...opts, signature, body, url: opts.url ?? request.url });
}

async function check(opts) {
  const parts = typeof opts.signature === "string" ? opts.signature.split(".") : [];
  const header = parts.length === 3 ? parseJsonObject(fromBase64url(parts[0])) : undefined;
  const payload = parts.length === 3 ? parseJsonObject(fromBase64url(parts[1])) : undefined;
  const mac = parts.length === 3 ? fromBase64url(parts[2]) : undefined;
  if (!header || !payload || !mac) return { ok: false, reason: "signature is not a well-formed JWT" };
  if (header.alg !== "HS256") return { ok: false, reason: `signature algorithm "${String(header.alg)}" is not HS256` };

  const signed = encoder.encode(`${parts[0]}.${parts[1]}`);
  const keys = [opts.currentSigningKey, opts.nextSigningKey].filter((key) => typeof key === "string" && key !== "");
  let matched = false;
  for (const key of keys) if (await hmacMatches(key, signed, mac)) matched = true;
  if (!matched) return { ok: false, reason: "signature does not match the current or next signing key" };

  const claims = asDeliveryClaims(payload);
  if (!claims) return { ok: false, reason: "signature claims are missing or of the wrong type" };
  const issuer = opts.issuer ?? "Svc";
  if (claims.iss !== issuer) return { ok: false, reason: `issuer is "${claims.iss}", expected "${issuer}"` };
  if (opts.url !== undefined && claims.sub !== opts.url)
    return { ok: false, reason: `subject is "${claims.sub}", expected "${opts.url}"` };
  const nowSec = (opts.nowMs ?? Date.now()) / 1000;
  const tolerance = opts.clockToleranceSec ?? 5;
  if (nowSec > claims.exp + tolerance) return { ok: false, reason: "signature has expired" };
  if (nowSec < claims.nbf - tolerance) return { ok: false, reason: "signature is not valid yet" };

  const body = typeof opts.body === "string" ? encoder.encode(opts.body) : opts.body;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  // Compared without padding: signers differ on whether the body hash keeps its trailing "=".
  if (!sameText(toBase64url(digest), claims.body.replace(/=+$/, "")))
    return { ok: false, reason: "body hash does not match the signed body" };
  return { ok: true, claims };
}

/** `crypto.subtle.verify` compares the MAC in constant time. */
async function hmacMatches(key, signed, mac) {
  const hmacKey = await crypto.subtle.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", hmacKey, mac, signed);
}

/** Runs in time independent of where the first difference is. */
function sameText(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function toBase64url(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Strict: a character outside the alphabet is malformed, never silently skipped. */
function fromBase64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "="));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function parseJsonObject(bytes) {
  if (!bytes) return undefined;
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function asDeliveryClaims(c) {
  const { iss, sub, iat, nbf, exp, jti, body } = c;
  if (typeof iss !== "string" || typeof sub !== "string" || typeof jti !== "string" || typeof body !== "string") return undefined;
  if (typeof iat !== "number" || typeof nbf !== "number" || typeof exp !== "number") return undefined;
  return { iss, sub, iat, nbf, exp, jti, body };
}
