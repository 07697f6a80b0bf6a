import { badRequest } from "../core/errors.ts";

/**
 * Which parts of a message are shown redacted (`Svc-Redact-Fields: body, header[Authorization]`):
 * the delivery carries the real values; everything that reads the message back (the message, its
 * log, its DLQ entry, its schedule) shows `REDACTED:<sha256 hex of the value>` instead.
 */
export interface RedactSpec {
  body?: boolean;
  /** Every header of the message. */
  allHeaders?: boolean;
  /** These headers only, lower case. */
  headers?: string[];
}

const MAX_FIELDS_LENGTH = 2048;

/**
 * `body`, `header`, `header[Name]`, comma-joined, as the official SDKs send them (`headers` and
 * `headers[Name]`, as the hosted docs write them, too). Undefined when nothing is to be redacted.
 */
export function parseRedactFields(raw: string, headerName: string): RedactSpec | undefined {
  if (raw.length > MAX_FIELDS_LENGTH) throw badRequest(`invalid ${headerName}: at most ${MAX_FIELDS_LENGTH} characters`);
  const spec: RedactSpec = {};
  const named = new Set<string>();
  for (const part of raw.split(",").map((p) => p.trim()).filter(Boolean)) {
    const one = /^headers?\[([!#$%&'*+.^_`|~0-9A-Za-z-]+)\]$/.exec(part);
    if (part === "body") spec.body = true;
    else if (part === "header" || part === "headers") spec.allHeaders = true;
    else if (one) named.add(one[1]!.toLowerCase());
    else
      throw badRequest(
        `invalid ${headerName} value "${part.slice(0, 80)}": use body, header or header[Name], comma-separated`,
      );
  }
  if (named.size > 0 && !spec.allHeaders) spec.headers = [...named];
  return spec.body || spec.allHeaders || spec.headers ? spec : undefined;
}

/** `REDACTED:` and the SHA-256 of the value in lower-case hex (what `sha256sum` prints for it). */
export function redactedValue(value: string | Uint8Array): string {
  return `REDACTED:${new Bun.CryptoHasher("sha256").update(value).digest("hex")}`;
}

export function redactHeaders(pairs: Array<[string, string]>, spec: RedactSpec | undefined): Array<[string, string]> {
  if (!spec || (!spec.allHeaders && !spec.headers)) return pairs;
  const names = new Set(spec.headers);
  const hidden = (name: string) => spec.allHeaders || names.has(name.toLowerCase());
  return pairs.map(([name, value]) => (hidden(name) ? [name, redactedValue(value)] : [name, value]));
}

const encoder = new TextEncoder();

export function redactBody(body: Uint8Array, spec: RedactSpec | undefined): Uint8Array {
  return spec?.body ? encoder.encode(redactedValue(body)) : body;
}
