import { useState } from "preact/hooks";
import { bytesToText, formatCount, hexDump, prettyText } from "../format.ts";

/** A body as text (pretty JSON when it is JSON) or as a hex dump; binary starts in hex. */
export function BodyView({ bytes, empty = "empty body" }: { bytes: Uint8Array | undefined; empty?: string }) {
  const text = bytes ? bytesToText(bytes) : null;
  const [mode, setMode] = useState<"text" | "hex">(text === null ? "hex" : "text");
  if (!bytes || bytes.length === 0) return <p class="empty">{empty}</p>;
  const shown = mode === "text" && text !== null ? prettyText(text) : hexDump(bytes);
  return (
    <div class="body-view">
      <div class="seg" role="group" aria-label="Body display">
        <button type="button" aria-pressed={mode === "text"} disabled={text === null} onClick={() => setMode("text")}>
          Text
        </button>
        <button type="button" aria-pressed={mode === "hex"} onClick={() => setMode("hex")}>
          Hex
        </button>
        <span class="muted small">{formatCount(bytes.length)} bytes{text === null ? ", not UTF-8" : ""}</span>
      </div>
      <pre class="code" tabIndex={0}>{shown}</pre>
    </div>
  );
}

/** Header name → values, as the API answers them. */
export function HeadersView({ headers, empty = "no headers" }: { headers: Record<string, string[] | string> | undefined; empty?: string }) {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return <p class="empty">{empty}</p>;
  return (
    <table class="table compact headers">
      <tbody>
        {entries.flatMap(([name, values]) =>
          (Array.isArray(values) ? values : [values]).map((value, i) => (
            <tr key={`${name}-${i}`}>
              <th scope="row">{name}</th>
              <td class="mono wrap">{value}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  );
}
