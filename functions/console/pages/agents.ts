/**
 * The agents a payer knows: those that charged them lately, those they gave a grant, and those
 * their policy names (a blocked agent stays listed, so it can be unblocked). Read through the same
 * use cases as the API. "Lately" is the last KNOWN_AGENTS_CHARGES charges: an agent that charged
 * once long ago and holds no grant is not listed (docs/console-pages.md), and can still be
 * filtered or blocked by its id.
 */
import type { Currency } from '../../core/money';
import { listMyGrants } from '../../use-cases/identity/grants';
import { listMyCharges, policyView, readPolicy } from '../../use-cases/identity/payers';

export const KNOWN_AGENTS_CHARGES = 100;

export interface KnownAgent {
  id: string;
  /** Undefined for an agent only the policy names (its name is not on any item we read). */
  name: string | undefined;
  /** The currencies it charged in lately (empty when unknown). */
  currencies: Currency[];
}

type PolicyJson = { agents?: Record<string, { blocked?: boolean }> };

/** The payer's known agents, by name, and the policy they were read with. */
export async function knownAgents(userId: string, baseUrl: string): Promise<{ agents: KnownAgent[]; policy: PolicyJson }> {
  const [charges, grants, policy] = await Promise.all([
    listMyCharges(userId, { limit: KNOWN_AGENTS_CHARGES }, baseUrl),
    listMyGrants(userId, { limit: 100 }),
    readPolicy(userId),
  ]);
  const byId = new Map<string, KnownAgent>();
  const add = (id: string, name: string | null | undefined, currency?: Currency) => {
    const known = byId.get(id) ?? { id, name: undefined, currencies: [] };
    if (name && !known.name) known.name = name;
    if (currency && !known.currencies.includes(currency)) known.currencies.push(currency);
    byId.set(id, known);
  };
  for (const c of charges.data) add(c.agent.id, c.agent.name, c.currency);
  for (const g of grants.grants) add(g.agentId, g.agentName);
  const policyJson = policyView(policy) as PolicyJson;
  for (const id of Object.keys(policyJson.agents ?? {})) add(id, undefined);
  const agents = [...byId.values()].sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id));
  return { agents, policy: policyJson };
}

/** How an agent is named on a page: its name, or its id when no name is known. */
export const agentLabel = (agent: { id: string; name?: string | null | undefined }) => agent.name ?? agent.id;
