import { useState } from "preact/hooks";
import { storedToken } from "../token.ts";
import { Card } from "../ui/bits.tsx";

/** The client configuration most MCP clients read (`mcpServers`, an HTTP server with its headers). */
export function mcpClientConfig(url: string, token: string): string {
  return JSON.stringify({ mcpServers: { svcd: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2);
}

/**
 * Where a coding agent connects: `/mcp` beside the messaging API (this page's origin), with this
 * account's token. The token stays masked on screen; Copy takes the real configuration.
 */
export function McpCard() {
  const [copied, setCopied] = useState(false);
  const url = `${location.origin}/mcp`;
  const token = storedToken() ?? "";
  const masked = `${token.slice(0, 4)}${"•".repeat(Math.max(4, token.length - 4))}`;
  return (
    <Card
      title="MCP endpoint"
      actions={
        <button
          type="button"
          class="small"
          onClick={() => navigator.clipboard?.writeText(mcpClientConfig(url, token)).then(() => setCopied(true))}
        >
          {copied ? "Copied" : "Copy configuration"}
        </button>
      }
    >
      <p>
        Coding agents reach this account's messages, logs, DLQ, workflow runs, pauses and clock through the Model Context
        Protocol (streamable HTTP) at <code data-testid="mcp-url">{url}</code>, with the messaging token.
      </p>
      <pre class="code" data-testid="mcp-config" tabIndex={0}>
        {mcpClientConfig(url, masked)}
      </pre>
    </Card>
  );
}
