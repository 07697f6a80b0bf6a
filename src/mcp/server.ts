import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Account } from "../accounts/accounts.ts";
import { HttpError } from "../core/errors.ts";
import type { Tool } from "./tool.ts";

const json = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value ?? null) }],
  ...(isError ? { isError: true } : {}),
});

/**
 * An MCP server for one request of one account (the endpoint is stateless: no session outlives
 * the request). An error the HTTP route would answer with a status becomes a tool error result
 * with the same `{"error": ...}` and the status, so an agent reads it and can correct its call.
 */
export function mcpServerFor(tools: Tool[], account: Account, version: string): McpServer {
  const server = new McpServer({ name: "svcd", version }, { capabilities: { tools: {} } });
  for (const t of tools) {
    server.registerTool(
      t.name,
      {
        description: t.description,
        inputSchema: t.input,
        annotations: {
          readOnlyHint: t.readOnly,
          ...(t.readOnly ? {} : { destructiveHint: t.destructive ?? false, idempotentHint: t.idempotent ?? false }),
          openWorldHint: false,
        },
      },
      async (args: unknown) => {
        try {
          return json(await t.run(account, args));
        } catch (error) {
          if (error instanceof HttpError) return json({ error: error.message, status: error.status }, true);
          throw error;
        }
      },
    );
  }
  return server;
}
