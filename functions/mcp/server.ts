/**
 * The MCP server for agents, over any transport: the low-level SDK Server with the tool table
 * (tools.ts). Tool arguments are validated with the API's own zod schemas and house messages
 * (contracts/validation.ts), so a bad argument, a refusal and an API error all come back the same way:
 * a tool result with isError and the API's message. The high-level McpServer would validate
 * arguments itself and word failures as zod dumps, so it is not used.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { ApiRequest } from '../contracts/api';
import { serialize } from '../contracts/json';
import { renderRefusal } from '../contracts/outcome';
import { validate } from '../contracts/validation';
import { refusalText } from '../messages/catalogue';
import { isRefusal } from '../messages/refusal';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { execute } from '../operations/execute';
import { type ApiCall, definedOnly, TOOLS, type ToolSpec } from './tools';

export const SERVER_INFO = { name: 'agent-payment-service', version: '1.0.0' };

const INSTRUCTIONS =
  'Payments for agents. Charge a user with their user key (create_charge), follow your charges (get_charge, list_charges), ' +
  'see what you earned (get_balance) and withdraw it (withdraw, list_withdrawals). To get a grant key instead of holding the ' +
  "user's account key, ask with request_grant, hand the consentUrl to the user, and poll get_grant_request: its first answer " +
  'after the user allowed it carries the key, once. Amounts are decimal numbers in currency ' +
  'units (USD 2 decimals, USDC 6), never rounded: an amount with too many decimals is refused. Every tool that moves money ' +
  'or asks for a grant (request_grant) needs an idempotency_key: reuse it to retry safely, never for a different operation.';

/** An answer of the API: its status and body text (JSON). */
export interface ApiAnswer {
  status: number;
  text: string;
}

/** Runs a tool's request: in-process (remote server) or over HTTP (stdio server). */
export type ToolExecutor = (tool: ToolSpec, args: Record<string, unknown>) => Promise<ApiAnswer>;

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return json;
};

/** tools/list, built once. */
export const TOOL_LIST: Tool[] = TOOLS.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: jsonSchema(tool.input, 'input') as Tool['inputSchema'],
  ...(tool.output ? { outputSchema: jsonSchema(tool.output, 'output') as Tool['outputSchema'] } : {}),
  annotations: { title: tool.title, ...tool.annotations },
}));

const byName = new Map<string, ToolSpec>(TOOLS.map((tool) => [tool.name, tool]));

/** The API's answer as a tool result: the body on success, the API's message as a tool error. */
export function toolResult(answer: ApiAnswer): CallToolResult {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  if (answer.status >= 400) {
    const message = body && typeof body === 'object' && 'error' in body ? String(body.error) : `HTTP ${answer.status}`;
    return { isError: true, content: [{ type: 'text', text: message }] };
  }
  return {
    content: [{ type: 'text', text: answer.text }],
    ...(body && typeof body === 'object' && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {}),
  };
}

const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** Where a tool's unexpected failure is reported (its caller sees only `internal error`). */
export type ErrorReporter = (tool: string, error: unknown) => void;

const logError: ErrorReporter = (tool, error) => logger().error('mcp tool failed', { tool, error: serializeError(error) });

/**
 * A fresh server (one per request on Lambda: stateless). The stdio server reports to stderr:
 * its stdout is the protocol, and the logger writes to stdout.
 */
export function createMcpServer(execute: ToolExecutor, reportError: ErrorReporter = logError): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) return errorResult(refusalText('unknownTool', request.params.name));
    try {
      const args = validate(tool.input, request.params.arguments ?? {});
      return toolResult(await execute(tool, args));
    } catch (error) {
      if (isRefusal(error)) return errorResult(renderRefusal(error).text);
      reportError(tool.name, error);
      return errorResult(refusalText('internalError'));
    }
  });
  return server;
}

/** The remote server's executor: the tool's operation, in this process, for the agent the endpoint authenticated (its key). */
export function inProcess(agentKey: string, baseUrl: string): ToolExecutor {
  return async (tool, args) => {
    const result = await execute(tool.operation, toolRequest(agentKey, tool.http(args)), { baseUrl: () => baseUrl });
    return { status: result.statusCode, text: result.rawBody ?? serialize(result.body ?? {}) };
  };
}

/**
 * The request a tool's `http` call stands for, as the route's handler would get it over HTTP: the
 * agent's key, the call's headers, path parameters and query, and its body as the JSON text the
 * stdio server would send (amounts as their exact literals), parsed by the route's own parser.
 */
function toolRequest(agentKey: string, call: ApiCall): ApiRequest {
  return {
    method: 'POST',
    path: '/mcp',
    headers: { ...call.headers, 'x-agent-key': agentKey },
    query: definedOnly(call.query ?? {}),
    params: call.params ?? {},
    body: call.body === undefined ? undefined : serialize(call.body),
    requestId: '',
  };
}
