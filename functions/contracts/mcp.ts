import type { RefusalCode } from '../messages/catalogue';
/**
 * What the MCP endpoint promises, read by the MCP adapter (functions/mcp) and the OpenAPI document
 * alike: the tools it offers, in the order tools/list gives them (functions/mcp/tools.ts has one
 * entry for each, test/contract/openapi.test.ts holds the two together), and its one answer to a
 * missing, unknown or disabled agent key.
 */
export const MCP_TOOL_NAMES = [
  'create_charge',
  'get_charge',
  'list_charges',
  'get_balance',
  'capture_charge',
  'release_charge',
  'refund_charge',
  'withdraw',
  'list_withdrawals',
  'request_grant',
  'get_grant_request',
  'x402_purchase',
] as const;
export type McpToolName = (typeof MCP_TOOL_NAMES)[number];

/** The one answer to a missing, unknown or disabled key, before any tool runs. */
export const MCP_AUTH_MESSAGE = 'invalidOrDisabledAgentKey' satisfies RefusalCode;
