/** Agent items for tests that call use cases and repositories directly (no HTTP registration). */
import type { AgentRef } from '../../functions/core/agents';
import { newAgentId } from '../../functions/core/ids';
import { createAgent } from '../../functions/store/identity/agent-registration.repository';

/** The key hash a test agent's item is keyed by (tests never need the key itself). */
export const testKeyHash = (agentId: string): string => `test-key-hash-${agentId}`;

/** The agent reference a money movement of this test agent carries. */
export const agentRef = (agentId: string): AgentRef => ({ id: agentId, keyHash: testKeyHash(agentId) });

/** Writes an agent item (enabled unless said otherwise) and returns its reference. */
export async function testAgent(agentId = newAgentId(), enabled = true): Promise<AgentRef> {
  await createAgent({
    id: agentId,
    name: `test agent ${agentId}`,
    email: 'agent@example.com',
    website: 'https://example.com',
    enabled,
    createdAt: new Date().toISOString(),
    keyHash: testKeyHash(agentId),
  });
  return agentRef(agentId);
}
