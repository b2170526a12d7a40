/**
 * The agent's withdrawals as operations (docs/payouts.md): take the earned balance out, and follow
 * the payouts. A withdrawal is a money movement under a required Idempotency-Key; its answer is the
 * rendering its idempotency record stores.
 */
import { answerOf } from '../contracts/api';
import { listWithdrawalsQuerySchema, withdrawSchema } from '../contracts/request.schemas';
import { renderWithdrawal } from '../contracts/settled-outcomes';
import { payoutView } from '../contracts/views';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { createWithdrawal, listWithdrawals, type WithdrawalsAnswer } from '../use-cases/payouts/withdrawals';
import { operation } from './operation';

/** POST /api/v1/agents/withdraw: x-agent-key, Idempotency-Key; checks in the order docs/payouts.md gives. */
export const withdrawOperation = operation({
  route: 'withdraw',
  needs: NEEDS.withdraw,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.withdraw },
  idempotency: 'required',
  body: { schema: withdrawSchema },
  run: ({ caller: { agent }, idempotencyKey, body }) => createWithdrawal({ agent, idempotencyKey, ...body }),
  render: (outcome) => answerOf(renderWithdrawal(outcome)),
});

/** A list of withdrawals as its answer (200): the one payout asked for, or a page. */
export function withdrawalsAnswer(answer: WithdrawalsAnswer) {
  if (answer.kind === 'one') return { statusCode: 200, body: payoutView(answer.payout) };
  return { statusCode: 200, body: { payouts: answer.payouts.map(payoutView), nextCursor: answer.nextCursor } };
}

/** GET /api/v1/agents/withdraw?limit=&cursor= (newest first) or ?payoutId= (one Payout): x-agent-key. */
export const listWithdrawalsOperation = operation({
  route: 'list-withdrawals',
  needs: NEEDS.listWithdrawals,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.listWithdrawals },
  idempotency: 'none',
  query: listWithdrawalsQuerySchema,
  run: ({ caller: { agent }, query }) => listWithdrawals(agent.id, query),
  render: withdrawalsAnswer,
});
