import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { refuse } from '../messages/refusal';
import * as NEEDS from '../registry/needs.generated';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.mcpGet });

/**
 * GET /mcp — the streamable HTTP transport's GET, which opens a stream of messages from server to
 * client. This server is stateless and sends none, so it answers as the transport specifies for
 * that case, 405 with `Allow: POST`: the SDK's client then carries on with POST alone, where a 404
 * made it report an error. Reads no key and touches nothing: there is nothing here to protect.
 */
export const handler = httpHandler(async () => {
  throw refuse('mcpPostOnly');
});
