/**
 * The remote MCP server behind POST /mcp: authenticate the agent once, then hand the request to
 * the SDK's web-standard streamable HTTP transport in stateless JSON mode (no session store, no
 * SSE: a fresh transport and server per request, docs/design.md §10), with tools that run the use
 * cases in this process. A tool call costs the DynamoDB requests of the endpoint it wraps and no
 * more: the authentication here fills the same in-memory caches the use cases read.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { ApiRequest, ApiResult } from '../contracts/api';
import { MCP_AUTH_MESSAGE } from '../contracts/mcp';
import type { Agent } from '../core/agents';
import { isRefusal, refuse } from '../messages/refusal';
import { authenticate, keySent, MISSING_KEY_HEADER } from '../use-cases/auth';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The agent behind `x-agent-key` or `Authorization: Bearer ag_live_…`. When the request is a
 * create_charge call, the user key in its arguments is looked up in the same BatchGetItem, as the
 * charge endpoint does; a bad user key is left for the tool to report.
 */
export async function authenticateMcpAgent(req: ApiRequest): Promise<{ agent: Agent; agentKey: string }> {
  const agentKey = req.headers['x-agent-key'] ?? BEARER.exec(req.headers.authorization ?? '')?.[1];
  if (!keySent(agentKey)) throw refuse(MISSING_KEY_HEADER.agentKey);
  const withKey: ApiRequest = { ...req, headers: { ...req.headers, 'x-agent-key': agentKey } };
  const userKey = chargeUserKey(req.body);
  if (userKey !== undefined) {
    try {
      await authenticate({ ...withKey, headers: { ...withKey.headers, 'x-user-key': userKey } }, MCP_AUTH_MESSAGE, true);
    } catch (error) {
      // Either key may be bad (or a grant key another agent's); the agent is decided just below,
      // from the cache this call filled, and the tool reports the user key's error.
      if (!isRefusal(error) || (error.statusCode !== 401 && error.statusCode !== 403)) throw error;
    }
  }
  const { agent } = await authenticate(withKey, MCP_AUTH_MESSAGE, false);
  return { agent, agentKey };
}

/** The user_key of a tools/call to create_charge, if the body is one. */
function chargeUserKey(body: string | undefined): string | undefined {
  try {
    const message = JSON.parse(body ?? '') as { method?: unknown; params?: { name?: unknown; arguments?: { user_key?: unknown } } };
    const key =
      message.method === 'tools/call' && message.params?.name === 'create_charge' ? message.params.arguments?.user_key : undefined;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** Hop-by-hop and framing headers the web Request computes itself. */
const DROPPED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding']);

/**
 * At most this many JSON-RPC messages in one POST (a batch): each may be a tool call that moves
 * money, and one request should not hold a function for a hundred of them (the SDK's own bound).
 */
export const MAX_MESSAGES_PER_REQUEST = 10;

/** A JSON-RPC error answer from before the transport (HTTP 400, `id: null`: no request was read). */
const invalidRequest = (message: string): ApiResult => ({
  statusCode: 400,
  body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: ${message}` } },
});

/** `host[:port]` and nothing else (no credentials, path or stray characters); a missing Host is left to HTTP. */
export function isWellFormedHost(host: string): boolean {
  if (host.length === 0 || host.length > 255 || !URL.canParse(`http://${host}`)) return false;
  const parsed = new URL(`http://${host}`).host;
  const given = host.toLowerCase();
  return parsed === given || `${parsed}:80` === given;
}

/** The request's Host, when it is malformed: a 400 before anything else (authentication included). */
export function refuseMalformedHost(req: ApiRequest): ApiResult | undefined {
  const host = req.headers.host;
  return host !== undefined && !isWellFormedHost(host) ? invalidRequest('malformed Host header') : undefined;
}

/** More messages in the batch than MAX_MESSAGES_PER_REQUEST: refused whole, before any runs. */
function refuseLargeBatch(body: string | undefined): ApiResult | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return undefined; // the transport answers a parse error in its own words
  }
  return Array.isArray(parsed) && parsed.length > MAX_MESSAGES_PER_REQUEST
    ? invalidRequest(`at most ${MAX_MESSAGES_PER_REQUEST} messages in one request`)
    : undefined;
}

/** One JSON-RPC POST through a fresh stateless transport; the server is closed after it. */
export async function serveMcp(req: ApiRequest, server: Server): Promise<ApiResult> {
  const refused = refuseMalformedHost(req) ?? refuseLargeBatch(req.body);
  if (refused) return refused;
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !DROPPED_HEADERS.has(name)) headers.set(name, value);
    }
    // The URL is only the transport's input; its host was checked above.
    const request = new Request(`https://${req.headers.host ?? 'localhost'}${req.path}`, {
      method: req.method,
      headers,
      ...(req.body === undefined ? {} : { body: req.body }),
    });
    const response = await transport.handleRequest(request);
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    return { statusCode: response.status, rawBody: await response.text(), headers: out };
  } finally {
    await server.close();
  }
}
