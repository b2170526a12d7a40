/**
 * npm run mcp: the MCP server for one agent over stdio, for a local MCP client (a desktop
 * assistant, an agent framework). Its tools call the HTTP API at BASE_URL with AGENT_KEY.
 *
 *   AGENT_KEY=ag_live_… BASE_URL=http://127.0.0.1:3000 npm run mcp
 *
 * BASE_URL must be https, or plain http to this machine (127.0.0.1, ::1, localhost); a redirect
 * from it is refused, never followed (the agent key would go along).
 *
 * stdout carries the protocol; anything else goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { BaseUrlError, overHttp } from '../functions/mcp/over-http';
import { createMcpServer } from '../functions/mcp/server';

async function main(): Promise<void> {
  const agentKey = process.env.AGENT_KEY;
  const baseUrl = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
  if (!agentKey) {
    console.error('AGENT_KEY is not set: the agent key (ag_live_…) the tools act as');
    process.exit(2);
  }
  let execute: ReturnType<typeof overHttp>;
  try {
    // The key goes along on every call: https only (plain http to loopback), redirects refused.
    execute = overHttp(baseUrl, agentKey);
  } catch (error) {
    if (!(error instanceof BaseUrlError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
  // stdout is the protocol: an unexpected failure (the API unreachable) is reported on stderr.
  const server = createMcpServer(execute, (tool, error) => console.error(`${tool} failed:`, error));
  await server.connect(new StdioServerTransport());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
