/**
 * The MCP tools, in the order tools/list gives them, each with the route whose operation it is: the
 * stdio server sends it as that route's method and path, the remote server runs that route's use
 * case in-process, and so the MCP function needs what these routes need (routes.ts `MCP_ROUTE`,
 * computed). Each has its implementation in functions/mcp/tools.ts, keyed by name: one missing fails
 * to compile.
 *
 * A module of its own because the MCP function imports it: the route table's areas (with their
 * operations' schemas and examples) are named here by type only, which the bundle drops.
 */
import type { ADMIN_ROUTES } from './admin';
import type { AGENT_ROUTES } from './agents';
import type { LINK_ROUTES } from './links';
import type { AGENT_TAB_ROUTES } from './tabs';
import type { USER_ROUTES } from './users';
import type { WEBHOOK_ROUTES } from './webhooks';
import type { X402_ROUTES } from './x402';
import type { X402_PURCHASE_ROUTES } from './x402-purchases';
import type { X402_REFUND_ROUTES } from './x402-refunds';

/** The routes a tool may stand for: the API's operations (not the console's pages or the service's own). */
type ToolRouteName = (
  | typeof AGENT_ROUTES
  | typeof ADMIN_ROUTES
  | typeof USER_ROUTES
  | typeof LINK_ROUTES
  | typeof WEBHOOK_ROUTES
  | typeof X402_ROUTES
  | typeof X402_PURCHASE_ROUTES
  | typeof X402_REFUND_ROUTES
  | typeof AGENT_TAB_ROUTES
)[number]['name'];

export const MCP_TOOLS = [
  { name: 'create_charge', route: 'create-charge' },
  { name: 'get_charge', route: 'get-charge' },
  { name: 'list_charges', route: 'list-charges' },
  { name: 'get_balance', route: 'get-balance' },
  { name: 'capture_charge', route: 'capture-charge' },
  { name: 'release_charge', route: 'release-charge' },
  { name: 'refund_charge', route: 'refund-charge' },
  { name: 'withdraw', route: 'withdraw' },
  { name: 'list_withdrawals', route: 'list-withdrawals' },
  { name: 'request_grant', route: 'agent-create-grant-request' },
  { name: 'get_grant_request', route: 'agent-get-grant-request' },
  { name: 'x402_purchase', route: 'agent-x402-purchase-create' },
  { name: 'x402_refund', route: 'agent-x402-refund-create' },
  { name: 'tab_open', route: 'agent-open-tab' },
  { name: 'tab_use', route: 'agent-use-tab' },
  { name: 'tab_close', route: 'agent-close-tab' },
] as const satisfies readonly { name: string; route: ToolRouteName }[];

export type McpToolName = (typeof MCP_TOOLS)[number]['name'];

/** The tools' names in tools/list order (the OpenAPI document lists them from here). */
export const MCP_TOOL_NAMES: readonly McpToolName[] = MCP_TOOLS.map((tool) => tool.name);
