/**
 * The operator's routes as operations (docs/operator-cli.md): users created, credited and read; agents
 * listed, read and switched on or off; held payouts released or cancelled; a charge given back to
 * its payer. Every one takes the operator (IAM, or x-admin-key where the stage takes a key). The
 * admin CLI (bin/operator/) runs the same use cases in-process and answers with these renders.
 */
import { answerOf } from '../contracts/api';
import {
  adminListPayoutsQuerySchema,
  creditSchema,
  listAgentsQuerySchema,
  refundChargeSchema,
  releaseChargeSchema,
  updateAgentSchema,
} from '../contracts/request.schemas';
import { renderCreatedUser, renderCredited, renderPayout } from '../contracts/settled-outcomes';
import { agentView, balancesView, payoutView } from '../contracts/views';
import type { Agent } from '../core/agents';
import type { Payout } from '../core/payouts';
import type { Balances } from '../core/users';
import * as NEEDS from '../registry/needs.generated';
import { refundChargeByOperator } from '../use-cases/charges/lifecycle';
import { type AgentPage, listAgentsForOperator, readAgent, updateAgentEnabled } from '../use-cases/identity/agents';
import { createUserByOperator, creditUserBalance, readUser } from '../use-cases/identity/users';
import { cancelPayout, listPayoutsForOperator, releasePayout } from '../use-cases/payouts/payout-holds';
import { settledChargeAnswer } from './lifecycle';
import { operation } from './operation';

const OPERATOR = { kind: 'operator' } as const;

/** A user and its balances (200). */
export const userAnswer = (user: { id: string; balances: Balances }) => ({
  statusCode: 200,
  body: { id: user.id, balances: balancesView(user.balances) },
});

/** An agent as the operator sees it (200). */
export const agentAnswer = (agent: Agent) => ({ statusCode: 200, body: agentView(agent) });

/** An agent and its withdrawable balance (200). */
export const agentWithBalanceAnswer = ({ agent, balances }: { agent: Agent; balances: Balances }) => ({
  statusCode: 200,
  body: { ...agentView(agent), balances: balancesView(balances) },
});

/** A page of agents (200). */
export const agentPageAnswer = (page: AgentPage) => ({
  statusCode: 200,
  body: { data: page.agents.map(agentView), nextCursor: page.nextCursor },
});

/** A payout as it is now (200). */
export const payoutAnswer = (payout: Payout) => answerOf(renderPayout(payout));

/** A page of payouts (200). */
export const payoutPageAnswer = (page: { payouts: Payout[]; nextCursor: string | null }) => ({
  statusCode: 200,
  body: { payouts: page.payouts.map(payoutView), nextCursor: page.nextCursor },
});

/** POST /api/v1/admin/users: a user with zero balances; the key is returned once (again, to a replay of an optional Idempotency-Key). */
export const adminCreateUserOperation = operation({
  route: 'admin-create-user',
  needs: NEEDS.adminCreateUser,
  credentials: OPERATOR,
  idempotency: 'optional',
  run: ({ idempotencyKey }) => createUserByOperator(idempotencyKey),
  render: (created) => answerOf(renderCreatedUser(created)),
});

/** POST /api/v1/admin/users/{id}/credits: Idempotency-Key, `{amount, currency}`. */
export const adminCreditUserOperation = operation({
  route: 'admin-credit-user',
  needs: NEEDS.adminCreditUser,
  credentials: OPERATOR,
  idempotency: 'required',
  body: { schema: creditSchema },
  run: ({ params, idempotencyKey, body }) => creditUserBalance({ userId: params.id, idempotencyKey, ...body }),
  render: (credited) => answerOf(renderCredited(credited)),
});

/** GET /api/v1/admin/users/{id}. */
export const adminGetUserOperation = operation({
  route: 'admin-get-user',
  needs: NEEDS.adminGetUser,
  credentials: OPERATOR,
  idempotency: 'none',
  run: ({ params }) => readUser(params.id),
  render: userAnswer,
});

/** GET /api/v1/admin/agents?enabled=&limit=&cursor=: agents newest first, e.g. those waiting to be enabled. */
export const adminListAgentsOperation = operation({
  route: 'admin-list-agents',
  needs: NEEDS.adminListAgents,
  credentials: OPERATOR,
  idempotency: 'none',
  query: listAgentsQuerySchema,
  run: ({ query }) => listAgentsForOperator(query),
  render: agentPageAnswer,
});

/** GET /api/v1/admin/agents/{id}: an agent and its withdrawable balance. */
export const adminGetAgentOperation = operation({
  route: 'admin-get-agent',
  needs: NEEDS.adminGetAgent,
  credentials: OPERATOR,
  idempotency: 'none',
  run: ({ params }) => readAgent(params.id),
  render: agentWithBalanceAnswer,
});

/** PATCH /api/v1/admin/agents/{id} `{enabled}`. */
export const adminUpdateAgentOperation = operation({
  route: 'admin-update-agent',
  needs: NEEDS.adminUpdateAgent,
  credentials: OPERATOR,
  idempotency: 'none',
  body: { schema: updateAgentSchema },
  run: ({ params, body }) => updateAgentEnabled(params.id, body.enabled),
  render: agentAnswer,
});

/** GET /api/v1/admin/payouts?status=HELD&limit=&cursor=: held payouts, oldest first. */
export const adminListPayoutsOperation = operation({
  route: 'admin-list-payouts',
  needs: NEEDS.adminListPayouts,
  credentials: OPERATOR,
  idempotency: 'none',
  query: adminListPayoutsQuerySchema,
  run: ({ query }) => listPayoutsForOperator(query),
  render: payoutPageAnswer,
});

/** POST /api/v1/admin/agents/{id}/payouts/{payoutId}/release: no body (or `{}`). */
export const adminReleasePayoutOperation = operation({
  route: 'admin-release-payout',
  needs: NEEDS.adminReleasePayout,
  credentials: OPERATOR,
  idempotency: 'none',
  body: { schema: releaseChargeSchema, optional: true },
  run: ({ params }) => releasePayout(params.id, params.payoutId),
  render: payoutAnswer,
});

/** POST /api/v1/admin/agents/{id}/payouts/{payoutId}/cancel: Idempotency-Key, no body (or `{}`). */
export const adminCancelPayoutOperation = operation({
  route: 'admin-cancel-payout',
  needs: NEEDS.adminCancelPayout,
  credentials: OPERATOR,
  idempotency: 'required',
  body: { schema: releaseChargeSchema, optional: true },
  run: ({ params, idempotencyKey }) => cancelPayout({ agentId: params.id, payoutId: params.payoutId, idempotencyKey }),
  render: payoutAnswer,
});

/** POST /api/v1/admin/agents/{id}/charges/{chargeId}/refund: Idempotency-Key, `{amount?}`. */
export const adminRefundChargeOperation = operation({
  route: 'admin-refund-charge',
  needs: NEEDS.adminRefundCharge,
  credentials: OPERATOR,
  idempotency: 'required',
  body: { schema: refundChargeSchema, optional: true },
  run: ({ params, idempotencyKey, body }) =>
    refundChargeByOperator({ agentId: params.id, chargeId: params.chargeId, idempotencyKey, ...body }),
  render: settledChargeAnswer,
});
