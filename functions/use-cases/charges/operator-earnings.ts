/**
 * The operator and a disabled agent's earnings (docs/lifecycle.md, "The operator returns a disabled
 * agent's earnings"): the agent's charges, as the agent itself would list them, to find what is
 * left to give back; each is returned by `refundChargeByOperator` (use-cases/charges/lifecycle.ts).
 */
import type { ListChargesQuery } from '../../contracts/request.schemas';
import { isId } from '../../core/ids';
import { refuse } from '../../messages/refusal';
import { getAgentById } from '../../store/identity/agent.repository';
import { type ChargePage, listAgentCharges } from './charges';

/** GET /api/v1/admin/agents/{id}/charges: any agent's charges, newest first, enabled or not. */
export async function listChargesForOperator(agentId: string | undefined, query: ListChargesQuery): Promise<ChargePage> {
  if (!isId('agent', agentId) || !(await getAgentById(agentId))) throw refuse('agentNotFound');
  return listAgentCharges(agentId, query);
}
