/**
 * Looks up an agent key and a user key (an account key, or a grant key) together: one strongly
 * consistent BatchGetItem, so a charge with cold caches costs a single read before its transaction.
 */
import type { Agent } from '../../core/agents';
import type { GrantScope } from '../../core/grant-scope';
import { GRANT_LIMIT_NAMES, type GrantLimits } from '../../core/grants';
import { type Currency, isCurrency } from '../../core/money';
import { batchGetConsistent } from '../batch-get';
import { readMinor } from '../numbers';
import { keys } from '../table';
import { toAgent } from './agent.repository';
import { scopeOf } from './grant.mapper';

export interface CredentialLookup {
  agentKeyHash?: string;
  userKeyHash?: string;
  grantKeyHash?: string;
}

/**
 * What a grant key's lookup item says: the grant and its terms, which never change (store/identity/grant.repository.ts
 * createGrant). Whether the grant is still active is decided by the charge's own transaction.
 */
export interface GrantKeyTerms {
  grantId: string;
  userId: string;
  agentId: string;
  currency: Currency;
  limits: GrantLimits;
  approvalAbove?: number;
  /** Where the agent may pay (core/grant-scope.ts); judged before the charge's transaction, from this item alone. */
  scope?: GrantScope;
  expiresAt?: string;
}

export interface CredentialResult {
  agent?: Agent;
  userId?: string;
  grant?: GrantKeyTerms;
}

export async function lookupCredentials(lookup: CredentialLookup): Promise<CredentialResult> {
  const wanted = [
    ...(lookup.agentKeyHash ? [keys.agent(lookup.agentKeyHash)] : []),
    ...(lookup.userKeyHash ? [keys.userKey(lookup.userKeyHash)] : []),
    ...(lookup.grantKeyHash ? [keys.grantKey(lookup.grantKeyHash)] : []),
  ];
  const result: CredentialResult = {};
  if (wanted.length === 0) return result;
  for (const item of await batchGetConsistent(wanted)) {
    if (item.type === 'Agent') result.agent = toAgent(item);
    else if (item.type === 'UserKey') result.userId = String(item.userId);
    else if (item.type === 'GrantKey') result.grant = toGrantKeyTerms(item);
  }
  return result;
}

function toGrantKeyTerms(item: Record<string, unknown>): GrantKeyTerms {
  const currency = item.currency;
  if (!isCurrency(currency)) throw new Error(`grant ${String(item.grantId)}: unknown currency`);
  const rawLimits = (item.limits ?? {}) as Record<string, unknown>;
  const limits: GrantLimits = {};
  for (const name of GRANT_LIMIT_NAMES) {
    if (rawLimits[name] !== undefined) limits[name] = readMinor(rawLimits, name);
  }
  return {
    grantId: String(item.grantId),
    userId: String(item.userId),
    agentId: String(item.agentId),
    currency,
    limits,
    ...(item.approvalAbove !== undefined ? { approvalAbove: readMinor(item, 'approvalAbove') } : {}),
    ...scopeOf(item),
    ...(typeof item.expiresAt === 'string' ? { expiresAt: item.expiresAt } : {}),
  };
}
