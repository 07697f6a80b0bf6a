/**
 * The attempts Bun's fetch refuses: a GET or HEAD with a body (the hosted service passes a
 * message's body on whatever its method, and the signature's `body` claim always names it). Bun's
 * `node:http` client sends one, given the body's length (without it the body goes out unframed).
 * Every other attempt keeps to fetch, the cheaper client per request.
 */
import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { AttemptRequest } from "./http-attempt.ts";

export const METHODS_FETCH_SENDS_NO_BODY = new Set(["GET", "HEAD"]);

/** The receiver sees the headers fetch adds by itself (User-Agent is always the delivery's own). */
const FETCH_DEFAULTS: Array<[string, string]> = [
  ["accept", "*/*"],
  ["accept-encoding", "gzip, deflate, br"],
];

export interface RawAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

/** One attempt through `node:http(s)`; rejects as fetch would (a timeout as the signal's reason). */
export function requestWithBody(req: AttemptRequest, signal: AbortSignal): Promise<RawAnswer> {
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => (headers[name] = value));
  for (const [name, value] of FETCH_DEFAULTS) headers[name] ??= value;
  headers["content-length"] = String(req.body.length);
  const send = req.url.startsWith("https:") ? httpsRequest : httpRequest;
  return new Promise<RawAnswer>((resolve, reject) => {
    const onAbort = () => outgoing.destroy(signal.reason);
    const outgoing = send(req.url, { method: req.method, headers }, (response) => {
      readBounded(response, req.maxResponseBytes).then(
        (body) => resolve({ status: response.statusCode ?? 0, headers: pairsOf(response), body }),
        reject,
      );
    });
    outgoing.on("error", reject).on("close", () => signal.removeEventListener("abort", onAbort));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    outgoing.end(req.body);
  }).catch((error) => {
    throw signal.aborted ? signal.reason : error;
  });
}

/** The answer's headers as fetch lists them (lower-case names, sorted, repeated ones joined). */
function pairsOf(response: IncomingMessage): Array<[string, string]> {
  const raw = response.rawHeaders;
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return [...headers.entries()];
}

/** The decoded answer, at most `limit` bytes of it (fetch decodes what it asked for). */
async function readBounded(response: IncomingMessage, limit: number): Promise<Uint8Array> {
  const encoding = response.headers["content-encoding"]?.trim().toLowerCase();
  const decoder =
    encoding === "gzip" ? createGunzip() : encoding === "deflate" ? createInflate() : encoding === "br" ? createBrotliDecompress() : null;
  const stream = decoder ? response.pipe(decoder) : response;
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Uint8Array>) {
      const piece = chunk.length > limit - size ? chunk.subarray(0, limit - size) : chunk;
      chunks.push(piece);
      size += piece.length;
      if (size >= limit) break;
    }
  } finally {
    // The rest of an oversized answer is not kept (a complete one leaves its connection to be reused).
    if (!response.complete) response.destroy();
    decoder?.destroy();
  }
  return Buffer.concat(chunks, size);
}
