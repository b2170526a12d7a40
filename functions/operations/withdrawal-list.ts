/**
 * The agent's payouts as an operation (docs/payouts.md): a page of them, newest first, or one by id.
 * Apart from the withdrawal (withdrawals.ts) so that each function bundles only its own schemas.
 */
import { listWithdrawalsQuerySchema } from '../contracts/request.schemas';
import { payoutView } from '../contracts/views';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { listWithdrawals, type WithdrawalsAnswer } from '../use-cases/payouts/withdrawals';
import { operation, type RenderContext } from './operation';

/** A list of withdrawals as its answer (200): the one payout asked for, or a page. */
export function withdrawalsAnswer(answer: WithdrawalsAnswer, { baseUrl }: RenderContext) {
  if (answer.kind === 'one') return { statusCode: 200, body: payoutView(answer.payout, baseUrl) };
  return { statusCode: 200, body: { payouts: answer.payouts.map((p) => payoutView(p, baseUrl)), nextCursor: answer.nextCursor } };
}

/** GET /api/v1/agents/withdraw?limit=&cursor= (newest first) or ?payoutId= (one Payout): x-agent-key. */
export const listWithdrawalsOperation = operation({
  route: 'list-withdrawals',
  needs: NEEDS.listWithdrawals,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.listWithdrawals },
  idempotency: 'none',
  query: listWithdrawalsQuerySchema,
  // A COMPLETED payout's receipt link (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { agent }, query }) => listWithdrawals(agent.id, query),
  render: withdrawalsAnswer,
});
