/**
 * Looks up an agent key and a user key together: one strongly consistent BatchGetItem, so a
 * charge with cold caches costs a single read before its transaction.
 */
import type { Agent } from '../core/agents';
import { toAgent } from './agent.repository';
import { batchGetConsistent } from './batch-get';
import { keys } from './table';

export interface CredentialLookup {
  agentKeyHash?: string;
  userKeyHash?: string;
}

export interface CredentialResult {
  agent?: Agent;
  userId?: string;
}

export async function lookupCredentials(lookup: CredentialLookup): Promise<CredentialResult> {
  const wanted = [
    ...(lookup.agentKeyHash ? [keys.agent(lookup.agentKeyHash)] : []),
    ...(lookup.userKeyHash ? [keys.userKey(lookup.userKeyHash)] : []),
  ];
  const result: CredentialResult = {};
  if (wanted.length === 0) return result;
  for (const item of await batchGetConsistent(wanted)) {
    if (item.type === 'Agent') result.agent = toAgent(item);
    else if (item.type === 'UserKey') result.userId = String(item.userId);
  }
  return result;
}
