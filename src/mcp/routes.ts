import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../context/app-context.ts";
import { messagingAuth } from "../http/auth.ts";
import { apiDoc, jsonContent } from "../openapi/doc.ts";
import type { McpDeps } from "./deps.ts";
import { mcpServerFor } from "./server.ts";
import { actionTools } from "./tools-act.ts";
import { readTools } from "./tools-read.ts";

const JsonRpcJson = Type.Object(
  { jsonrpc: Type.Literal("2.0") },
  { additionalProperties: true, description: "a JSON-RPC 2.0 message" },
);

/**
 * `/mcp`: the Model Context Protocol over streamable HTTP, stateless. Each POST carries JSON-RPC
 * messages and gets the JSON answer; no session id, no server-sent stream (GET and DELETE answer
 * 405, which the protocol allows). Authenticated as the messaging API: an agent acts for the token's account.
 */
export function mcpRoutes(ctx: AppContext, deps: McpDeps, version: string) {
  const tools = [...readTools(deps), ...actionTools(deps)];
  return new Elysia().use(messagingAuth(ctx.accounts, ctx.dialect)).all(
    "/mcp",
    async ({ account, request }) => {
      if (request.method !== "POST")
        return Response.json(
          { error: "the MCP endpoint is stateless: POST JSON-RPC messages" },
          { status: 405, headers: { allow: "POST" } },
        );
      const server = mcpServerFor(tools, account, version);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        return await transport.handleRequest(request);
      } finally {
        // The answer is complete (JSON, not a stream): nothing of this request's server is needed after it.
        await server.close();
      }
    },
    {
      parse: "none",
      detail: apiDoc({
        summary: "Model Context Protocol (streamable HTTP, stateless): POST JSON-RPC messages; tools over this API (docs/mcp.md)",
        requestBody: jsonContent(JsonRpcJson, "a JSON-RPC request or notification (or a batch)"),
        responses: {
          200: jsonContent(JsonRpcJson, "the JSON-RPC answer"),
          202: { description: "accepted: a notification or response, no body" },
          405: jsonContent(Type.Object({ error: Type.String() }), "GET or DELETE: no stream, no session"),
        },
      }),
    },
  );
}
