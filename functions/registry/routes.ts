/**
 * The operation registry: every HTTP route as data, keyed by its `RouteName`. Each area of the API has
 * its module beside this one (agents.ts, admin.ts, users.ts, links.ts, console.ts, webhooks.ts,
 * x402.ts, service.ts), and each route is one entry there: its method, path, credentials, table
 * grant, capabilities and its OpenAPI `operation` (summary, the schemas its handler validates with,
 * an example per answer), in one object literal. This file puts them in order. From the same entries
 * come the CDK stack's functions with exactly the grants and environment their capabilities call for
 * (lib/http-api.ts), the local server (bin/local), each handler's configuration needs (`configNeeds`),
 * the OpenAPI document (functions/api/openapi/document.ts reads each entry's operation), and the MCP
 * function's needs (`MCP_TOOLS` in mcp-tools.ts, the union of their routes'). An entry without its
 * operation, or a tool without its implementation (functions/mcp/tools.ts), fails to compile.
 * Adding a route: docs/registry.md. A handler module exports `handler`.
 *
 * It lives below both adapters (functions/api and functions/mcp read it; it reads neither). No Lambda
 * function imports this file: the route handlers read their needs from
 * functions/registry/needs.generated.ts (`loadConfig({ require: NEEDS.<route> })`, written by
 * `npm run docs` from `configNeeds`, bin/registry/needs.ts), and the MCP function reads only
 * mcp-tools.ts, so neither carries the route table or the operations' schemas and examples.
 */
import {
  type Config,
  type ConfigNeed,
  NEEDS_ADMIN_AUTH,
  NEEDS_APPROVAL_SECRET,
  NEEDS_PAYPAL_ORDERS,
  NEEDS_PAYPAL_WEBHOOK,
  NEEDS_PUBLIC_BASE_URL,
  NEEDS_RECEIPTS,
  NEEDS_SEALED_ANSWERS,
  NEEDS_USDC_TOPUPS,
  NEEDS_WEBHOOK_SECRETS,
  NEEDS_WITHDRAWALS,
  NEEDS_X402,
  NEEDS_X402_REFUNDS,
  NEEDS_X402_SETTLE,
} from '../config';
import { MCP_AUTH_MESSAGE } from '../contracts/mcp';
import { jsonRpcMessage, jsonRpcMessages } from '../contracts/response.schemas';
import { refusalText as msg } from '../messages/catalogue';
import { combine } from '../store/access';
import { ADMIN_ROUTES } from './admin';
import { AGENT_ROUTES } from './agents';
import { CONSOLE_ROUTES } from './console';
import { BODY_ERRORS, BUSY, errors, ok } from './doc';
import { LINK_ROUTES } from './links';
import { MCP_TOOL_NAMES, MCP_TOOLS } from './mcp-tools';
import { RECEIPT_ROUTES } from './receipts';
import { SERVICE_ROUTES } from './service';
import type { AdminAuth, DocumentedRoute, RouteSpec } from './spec';
import { AGENT_TAB_ROUTES, USER_TAB_ROUTES } from './tabs';
import { USER_ROUTES } from './users';
import { WEBHOOK_ROUTES } from './webhooks';
import { X402_ROUTES } from './x402';
import { X402_PURCHASE_ROUTES } from './x402-purchases';
import { X402_REFUND_ROUTES } from './x402-refunds';

export { MCP_TOOL_NAMES, MCP_TOOLS, type McpToolName } from './mcp-tools';
export type { AdminAuth, DocumentedRoute, PageRoute, RouteSpec } from './spec';

/** The route table in the order the stack, the local server and the document list it: the areas' entries, names kept as literal types. */
const ROUTE_TABLE = [
  ...AGENT_ROUTES,
  ...ADMIN_ROUTES,
  ...USER_ROUTES,
  ...LINK_ROUTES,
  ...CONSOLE_ROUTES,
  ...WEBHOOK_ROUTES,
  ...X402_ROUTES,
  ...X402_PURCHASE_ROUTES,
  ...X402_REFUND_ROUTES,
  ...RECEIPT_ROUTES,
  ...AGENT_TAB_ROUTES,
  ...USER_TAB_ROUTES,
  ...SERVICE_ROUTES,
] as const;

/** What a function is given for what it does: its grants and the capabilities that bring it environment. */
type Needs = Pick<RouteSpec, 'table' | 'queue' | 'approvalSecret' | 'publicLinks' | 'webhookSecrets' | 'sealedAnswers' | 'topups' | 'x402'>;

/**
 * What a function running all of `routes`' use cases needs: every grant and capability any of them
 * has. Not their credentials (admin, public, adminKeyAlternative and its operatorTable): the MCP
 * function authenticates agents only.
 */
function unionOfNeeds(routes: readonly RouteSpec[]): Needs {
  const any = (flag: 'queue' | 'approvalSecret' | 'publicLinks' | 'webhookSecrets' | 'sealedAnswers') =>
    routes.some((route) => route[flag] === true);
  // A withdrawal's queue capability covers a refund's (it is the refund's and the RPC URL).
  const queue = any('queue') ? true : routes.some((route) => route.queue === 'refunds') ? 'refunds' : undefined;
  const topups = [...new Set(routes.flatMap((route) => (route.topups ? [route.topups] : [])))];
  if (topups.length > 1) throw new Error(`one function cannot both open top-ups and take PayPal's webhook: ${topups.join(', ')}`);
  const x402 = routes.some((route) => route.x402 === 'settle')
    ? 'settle'
    : routes.some((route) => route.x402 === 'read')
      ? 'read'
      : undefined;
  return {
    table: combine(...routes.map((route) => route.table)),
    ...(queue ? { queue } : {}),
    ...(any('approvalSecret') ? { approvalSecret: true } : {}),
    ...(any('publicLinks') ? { publicLinks: true } : {}),
    ...(any('webhookSecrets') ? { webhookSecrets: true } : {}),
    ...(any('sealedAnswers') ? { sealedAnswers: true } : {}),
    ...(topups[0] ? { topups: topups[0] } : {}),
    ...(x402 ? { x402 } : {}),
  };
}

const toolRoute = (name: string): RouteSpec => {
  const route: RouteSpec | undefined = ROUTE_TABLE.find((r) => r.name === name);
  if (!route) throw new Error(`no route ${name}`);
  return route;
};

/** The remote MCP server runs its tools' use cases in-process, so it needs what their routes need, and no more. */
const MCP_ROUTE = {
  name: 'mcp',
  method: 'POST',
  path: '/mcp',
  ...unionOfNeeds(MCP_TOOLS.map((tool) => toolRoute(tool.route))),
  operation: () => ({
    summary: 'MCP server (streamable HTTP, stateless)',
    description:
      `The Model Context Protocol endpoint for agents: tools ${MCP_TOOL_NAMES.join(', ')}. ` +
      'Send JSON-RPC with `Accept: application/json, text/event-stream`; answers are JSON (no SSE, no session). The agent ' +
      "key is checked before any tool runs; tool failures come back as tool results with isError and the API's message. " +
      'A batch holds at most 10 messages (more is a JSON-RPC error, and none runs); a malformed Host header is a 400 ' +
      'before anything else.',
    tag: 'MCP',
    security: [['agentKey'], ['agentBearer']],
    body: {
      name: 'JsonRpcMessages',
      schema: jsonRpcMessages,
      example: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_balance', arguments: {} } },
    },
    responses: {
      200: ok('The JSON-RPC response (an array of them for a batch).', jsonRpcMessages, {
        jsonrpc: '2.0',
        id: 1,
        result: {
          content: [{ type: 'text', text: '{"balances":{"USD":1.5,"USDC":0}}' }],
          structuredContent: { balances: { USD: 1.5, USDC: 0 } },
        },
      }),
      202: { description: 'A notification or response was accepted (no body).' },
      400: {
        description:
          'Not a valid JSON-RPC message, a batch of more than 10, or a malformed Host header (a JSON-RPC error object, code -32600).',
        schema: jsonRpcMessage,
      },
      401: errors('The agent key is missing, unknown or disabled.', [msg(MCP_AUTH_MESSAGE)]),
      406: { description: 'The Accept header does not allow application/json and text/event-stream.', schema: jsonRpcMessage },
      413: BODY_ERRORS[413],
      415: { description: 'Not application/json (a JSON-RPC error object).', schema: jsonRpcMessage },
      503: BUSY,
    },
  }),
} as const satisfies DocumentedRoute;

const LAST_ROUTES = [
  // The transport's GET (a server-to-client stream): 405 `Allow: POST`, as it specifies for a server without one.
  {
    name: 'mcp-get',
    method: 'GET',
    path: '/mcp',
    public: true,
    table: {},
    operation: () => ({
      summary: 'MCP server: no event stream',
      description:
        "The streamable HTTP transport's GET, which would open a stream of server-to-client messages. The server is stateless " +
        'and has none: 405 with `Allow: POST`, as the transport specifies, and clients carry on with POST.',
      tag: 'MCP',
      security: [],
      responses: {
        405: errors('This path takes POST only.', [msg('mcpPostOnly')], ['Allow']),
      },
    }),
  },
  { name: 'not-found', method: 'ANY', path: '$default', public: true, table: {} },
] as const satisfies readonly RouteSpec[];

type RouteEntry = (typeof ROUTE_TABLE)[number] | typeof MCP_ROUTE | (typeof LAST_ROUTES)[number];

/** The name of a route of the registry: what every per-route table is keyed by. */
export type RouteName = RouteEntry['name'];

/** A route as its function is deployed: the operator's read folded into its grant. */
const deployed = (route: RouteSpec<RouteName>): RouteSpec<RouteName> =>
  route.operatorTable ? { ...route, table: combine(route.table, route.operatorTable) } : route;

export const ROUTES: readonly RouteSpec<RouteName>[] = [...ROUTE_TABLE, MCP_ROUTE, ...LAST_ROUTES].map(deployed);

const BY_NAME = new Map<string, RouteSpec<RouteName>>(ROUTES.map((route) => [route.name, route]));

/** The route of this name (every RouteName has one). */
export function routeNamed(name: RouteName): RouteSpec<RouteName> {
  const route = BY_NAME.get(name);
  if (!route) throw new Error(`no route ${name}`);
  return route;
}

/**
 * What a route's function needs in its environment beyond the shared base, from its entry's
 * capabilities: the stack gives exactly these (lib/http-api.ts), and the handler refuses to start
 * without them and needs nothing more: its `loadConfig({ require: NEEDS.<route> })` reads them from
 * functions/registry/needs.generated.ts, which `npm run docs` writes from this (bin/registry/needs.ts).
 * Each need once, in the order a missing one is reported.
 */
export function configNeeds(route: RouteSpec): (cfg: Config) => readonly ConfigNeed[] {
  const listed: ConfigNeed[] = [
    ...(route.queue === true ? NEEDS_WITHDRAWALS : []),
    ...(route.queue === 'refunds' ? NEEDS_X402_REFUNDS : []),
    ...(route.x402 === 'read' ? NEEDS_X402 : []),
    ...(route.x402 === 'settle' ? NEEDS_X402_SETTLE : []),
    ...(route.approvalSecret ? NEEDS_APPROVAL_SECRET : []),
    ...(route.publicLinks ? NEEDS_PUBLIC_BASE_URL : []),
    ...(route.topups === 'open' ? [...NEEDS_USDC_TOPUPS, ...NEEDS_PAYPAL_ORDERS] : []),
    ...(route.topups === 'webhook' ? NEEDS_PAYPAL_WEBHOOK : []),
    ...(route.webhookSecrets ? NEEDS_WEBHOOK_SECRETS : []),
    ...(route.sealedAnswers ? NEEDS_SEALED_ANSWERS : []),
    ...(route.receipts ? NEEDS_RECEIPTS : []),
  ];
  const fixed = listed.filter((need, i) => listed.findIndex((other) => JSON.stringify(other) === JSON.stringify(need)) === i);
  return (cfg) => [...(recognisesAdmin(route) ? NEEDS_ADMIN_AUTH(cfg) : []), ...fixed];
}

/** Whether the route's function recognises the operator at all (it is given ADMIN_AUTH). */
export const recognisesAdmin = (route: RouteSpec): boolean => route.admin === true || route.adminKeyAlternative === true;

/** Whether the route's function reads the admin key secret under the stage's admin authorization. */
export const readsAdminKey = (route: RouteSpec, adminAuth: AdminAuth): boolean => adminAuth === 'key' && recognisesAdmin(route);

export const handlerEntry = (route: RouteSpec): string => `functions/api/${route.name}.handler.ts`;
