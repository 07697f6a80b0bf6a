import { toBase64 } from "../util/base64.ts";
import { bytesOf } from "./raw-steps.ts";

/**
 * A webhook call as the event `context.waitForWebhook` receives: the SDK rebuilds the request from
 * `{method, header, body (base64), proto, host, url (path and query)}`.
 */
export function webhookEvent(request: Request, body: Uint8Array): Uint8Array {
  const url = new URL(request.url);
  const header: Record<string, string[]> = {};
  request.headers.forEach((value, name) => {
    (header[name] ??= []).push(value);
  });
  return bytesOf(
    JSON.stringify({
      method: request.method,
      header,
      body: toBase64(body),
      proto: url.protocol.replace(/:$/, ""),
      host: request.headers.get("host") ?? url.host,
      url: url.pathname + url.search,
    }),
  );
}
