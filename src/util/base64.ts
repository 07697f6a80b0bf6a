/** Bodies travel in JSON either as text or as base64, depending on whether they are valid UTF-8. */

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * Decodes standard or url-safe base64, padding optional. Strict, because Buffer's own decoder
 * silently drops foreign characters and would turn a client's typo into a corrupted body.
 */
export function fromBase64(text: string): Uint8Array {
  const unpadded = text.replace(/={1,2}$/, "");
  if (!/^[A-Za-z0-9+/_-]*$/.test(unpadded) || unpadded.length % 4 === 1) {
    throw new Error("invalid base64 text");
  }
  return new Uint8Array(Buffer.from(unpadded, "base64"));
}

// ignoreBOM keeps a leading BOM in the text, so the text re-encodes to exactly the original bytes.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function isUtf8(bytes: Uint8Array): boolean {
  return decodeUtf8(bytes) !== undefined;
}

/**
 * `{ [plainKey]: text }` for a UTF-8 body, `{ [base64Key]: base64 }` otherwise, `{}` when empty —
 * the `body` / `bodyBase64` pairs of messages, logs and DLQ entries.
 */
export function bodyFields<P extends string, B extends string>(
  bytes: Uint8Array,
  plainKey: P,
  base64Key: B,
): Partial<Record<P | B, string>> {
  const out: Partial<Record<P | B, string>> = {};
  if (bytes.length === 0) return out;
  const text = decodeUtf8(bytes);
  if (text !== undefined) out[plainKey] = text;
  else out[base64Key] = toBase64(bytes);
  return out;
}
