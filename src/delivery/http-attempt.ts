/** One HTTP attempt with a deadline, keeping at most `maxResponseBytes` of the answer body. */
import { METHODS_FETCH_SENDS_NO_BODY, requestWithBody } from "./body-on-get.ts";

export interface AttemptRequest {
  url: string;
  method: string;
  headers: Headers;
  body: Uint8Array;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Whether a 2XX answer's headers are kept (any other answer's always are). */
  headersOf2xx: boolean;
}

export interface AttemptResult {
  status?: number;
  headers?: Array<[string, string]>;
  body?: Uint8Array;
  error?: string;
}

async function readBounded(response: Response, limit: number, signal: AbortSignal): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      if (signal.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - size;
      const piece = value.length > room ? value.subarray(0, room) : value;
      chunks.push(piece);
      size += piece.length;
    }
  } finally {
    // The rest of an oversized answer is not kept; cancelling frees the connection.
    reader.cancel().catch(() => {});
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

/**
 * One clear sentence for the log: the error code once (Bun repeats it in the message), without
 * fetch's hint about its `verbose` option, and saying when the answer broke off after its status.
 */
function describeFailure(error: unknown, timeoutMs: number, status?: number): string {
  const e = error as { name?: string; code?: string; message?: string };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `timeout: no complete answer within ${timeoutMs} ms`;
  let message = String(e?.message ?? error).replace(/\s*For more information, pass `verbose: true`[\s\S]*$/, "").trim();
  if (e?.code && !message.startsWith(e.code)) message = `${e.code}: ${message}`;
  return status === undefined ? message : `the answer broke off after status ${status}: ${message}`;
}

export async function performRequest(req: AttemptRequest): Promise<AttemptResult> {
  const signal = AbortSignal.timeout(Math.max(1, req.timeoutMs));
  let status: number | undefined;
  try {
    if (req.body.length > 0 && METHODS_FETCH_SENDS_NO_BODY.has(req.method)) {
      const answer = await requestWithBody(req, signal);
      const ok = answer.status >= 200 && answer.status < 300;
      return { status: answer.status, headers: ok && !req.headersOf2xx ? undefined : answer.headers, body: answer.body };
    }
    const response = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body.length === 0 ? undefined : req.body,
      redirect: "manual",
      signal,
      // Each delivery is its own request; keep-alive pools stay on, compression is the receiver's call.
      decompress: true,
    } as RequestInit);
    status = response.status;
    // A declared length within the limit bounds an unencoded answer (decompressing could grow
    // it): read it in one native call, the stream reader costs more than the rest of the attempt.
    const declared = Number(response.headers.get("content-length") ?? NaN);
    const body =
      Number.isFinite(declared) && declared <= req.maxResponseBytes && !response.headers.has("content-encoding")
        ? await response.bytes()
        : await readBounded(response, req.maxResponseBytes, signal);
    const ok = status >= 200 && status < 300;
    return { status, headers: ok && !req.headersOf2xx ? undefined : [...response.headers.entries()], body };
  } catch (error) {
    return { error: describeFailure(error, req.timeoutMs, status) };
  }
}
