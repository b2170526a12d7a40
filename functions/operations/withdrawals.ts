/**
 * The agent's withdrawal as an operation (docs/payouts.md): take the earned balance out (following
 * the payouts is withdrawal-list.ts: a module each, so neither function bundles the other's
 * schemas). A withdrawal is a money movement under a required Idempotency-Key; its answer is the
 * rendering its idempotency record stores.
 */
import { answerOf } from '../contracts/api';
import { renderWithdrawal } from '../contracts/settled-outcomes';
import { withdrawSchema } from '../contracts/withdraw.schema';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { createWithdrawal } from '../use-cases/payouts/withdrawals';
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
