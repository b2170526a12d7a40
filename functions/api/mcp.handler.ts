import { config, loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import { authenticateMcpAgent, refuseMalformedHost, serveMcp } from '../mcp/remote';
import { createMcpServer, inProcess } from '../mcp/server';
import { refuse } from '../messages/refusal';
import { routeConfigNeeds } from '../registry/routes';

// What its tools' routes need (the registry computes the union): the withdraw tool's chain and
// payout queue, create_charge's approval links, x402_purchase's hot wallet.
loadConfig({ require: routeConfigNeeds('mcp') });

/** POST /mcp — the MCP server (streamable HTTP, stateless); x-agent-key or Authorization: Bearer. */
export const handler = httpHandler(async (req) => {
  const badHost = refuseMalformedHost(req);
  if (badHost) return badHost;
  const { agent, agentKey } = await authenticateMcpAgent(req);
  if (Buffer.byteLength(req.body ?? '', 'utf8') > config().MAX_BODY_BYTES) throw refuse('bodyTooLarge');
  return serveMcp(req, createMcpServer(inProcess(agent, agentKey, publicBaseUrl())));
});
