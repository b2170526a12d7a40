import { config, loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import { authenticateMcpAgent, refuseMalformedHost, serveMcp } from '../mcp/remote';
import { createMcpServer, inProcess } from '../mcp/server';
import { refuse } from '../messages/refusal';
import * as NEEDS from '../registry/needs.generated';

// What its tools' routes need, as the registry computes it (functions/registry/routes.ts MCP_ROUTE):
// the withdraw tool's chain and payout queue, create_charge's approval links, x402_purchase's hot
// wallet. test/observability/config-init.test.ts holds every handler's line to its entry's needs.
loadConfig({ require: NEEDS.mcp });

/** POST /mcp — the MCP server (streamable HTTP, stateless); x-agent-key or Authorization: Bearer. */
export const handler = httpHandler(async (req) => {
  const badHost = refuseMalformedHost(req);
  if (badHost) return badHost;
  const { agentKey } = await authenticateMcpAgent(req);
  if (Buffer.byteLength(req.body ?? '', 'utf8') > config().MAX_BODY_BYTES) throw refuse('bodyTooLarge');
  return serveMcp(req, createMcpServer(inProcess(agentKey, publicBaseUrl())));
});
