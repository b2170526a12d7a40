import type { RefusalCode } from '../messages/catalogue';
/**
 * What the MCP endpoint promises, read by the MCP adapter (functions/mcp) and the OpenAPI document
 * alike: its one answer to a missing, unknown or disabled agent key. Its tools are the operation
 * registry's (functions/registry/mcp-tools.ts `MCP_TOOLS`).
 */

/** The one answer to a missing, unknown or disabled key, before any tool runs. */
export const MCP_AUTH_MESSAGE = 'invalidOrDisabledAgentKey' satisfies RefusalCode;
