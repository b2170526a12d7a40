/** Public JSON shapes of the resources (money as exact JSON numbers). */
import { jsonAmount } from '../http/response';
import type { Agent } from '../store/agent.repository';
import type { Charge } from '../store/charge.repository';
import type { Balances } from '../store/user.repository';

export function chargeView(charge: Charge) {
  return {
    id: charge.id,
    idempotencyKey: charge.idempotencyKey,
    amount: jsonAmount(charge.amount, charge.currency),
    currency: charge.currency,
    description: charge.description,
    status: charge.status,
    createdAt: charge.createdAt,
  };
}

export function balancesView(balances: Balances) {
  return { USD: jsonAmount(balances.USD, 'USD'), USDC: jsonAmount(balances.USDC, 'USDC') };
}

export function agentView(agent: Agent) {
  return {
    id: agent.id,
    name: agent.name,
    email: agent.email,
    website: agent.website,
    enabled: agent.enabled,
    createdAt: agent.createdAt,
  };
}
