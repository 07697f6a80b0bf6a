import { HttpError } from "../core/errors.ts";

/**
 * Reads a request body up to `limit` bytes. Past the limit it stops reading at once and answers
 * 412 (the plan's max message size), so an oversized body is never buffered whole.
 */
export async function readBodyLimited(request: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new HttpError(412, `message body too large: the plan allows at most ${limit} bytes`);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  // A declared length within the limit bounds the body (the server enforces Content-Length), so
  // read it in one native call: the stream reader below costs more than the rest of a publish.
  if (Number.isFinite(declared)) return await request.bytes();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
