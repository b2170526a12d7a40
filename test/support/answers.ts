/**
 * Use cases answer outcomes (functions/operations/ renders them); tests that call a use case
 * directly and check its answer read it the way the route sends it: `answered` renders an outcome
 * with the operation's own `render`, or a stored replay as it is sent.
 */
import { type ApiResult, StoredReply } from '../../functions/contracts/api';
import { serialize } from '../../functions/contracts/json';
import { createChargeOperation } from '../../functions/operations/charges';
import type { RenderContext } from '../../functions/operations/operation';
import { type CreateChargeInput, createCharge as createChargeUseCase } from '../../functions/use-cases/charges/charges';

/** The answer as the route sends it: status, body and its exact JSON text. */
export type Answered = ApiResult & { rawBody: string };

/**
 * `links`: the address the use case was given (its input's `baseUrl`), so a rendered answer has the
 * links the stored one has, as the operation renders with the `baseUrl` its `run` got; '' by default
 * (the routes that make no links).
 */
export function answered<O>(
  outcome: O | StoredReply,
  render: (outcome: O, context: RenderContext) => ApiResult,
  links: RenderContext = { baseUrl: '' },
): Answered {
  const result = outcome instanceof StoredReply ? outcome.toResult() : render(outcome, { baseUrl: links.baseUrl });
  const rawBody = result.rawBody ?? serialize(result.body ?? {});
  return { ...result, rawBody, body: result.body ?? JSON.parse(rawBody) };
}

/** `createCharge` (the use case), answered as POST /api/v1/agents/charges answers it. */
export async function createCharge(input: CreateChargeInput): Promise<Answered> {
  return answered(await createChargeUseCase(input), createChargeOperation.render, input);
}

// The agent's and the operator's money movements and creations, answered as their routes answer them.

import { adminCancelPayoutOperation, payoutAnswer } from '../../functions/operations/admin-payouts';
import { adminCreateUserOperation, adminCreditUserOperation } from '../../functions/operations/admin-users';
import { registerAgentOperation } from '../../functions/operations/agents';
import { settledChargeAnswer } from '../../functions/operations/lifecycle';
import { withdrawOperation } from '../../functions/operations/withdrawals';
import * as lifecycle from '../../functions/use-cases/charges/lifecycle';
import * as agents from '../../functions/use-cases/identity/agents';
import * as users from '../../functions/use-cases/identity/users';
import * as payoutHolds from '../../functions/use-cases/payouts/payout-holds';
import * as withdrawals from '../../functions/use-cases/payouts/withdrawals';

export const createWithdrawal = async (...args: Parameters<typeof withdrawals.createWithdrawal>) =>
  answered(await withdrawals.createWithdrawal(...args), withdrawOperation.render);
export const registerAgent = async (...args: Parameters<typeof agents.registerAgent>) =>
  answered(await agents.registerAgent(...args), registerAgentOperation.render);
export const createUserWithKey = async (...args: Parameters<typeof users.createUserWithKey>) =>
  answered(await users.createUserWithKey(...args), adminCreateUserOperation.render);
export const creditUserBalance = async (...args: Parameters<typeof users.creditUserBalance>) =>
  answered(await users.creditUserBalance(...args), adminCreditUserOperation.render);
export const cancelPayout = async (...args: Parameters<typeof payoutHolds.cancelPayout>) =>
  answered(await payoutHolds.cancelPayout(...args), adminCancelPayoutOperation.render);
export const releasePayout = async (...args: Parameters<typeof payoutHolds.releasePayout>) =>
  answered(await payoutHolds.releasePayout(...args), payoutAnswer);
export const captureCharge = async (...args: Parameters<typeof lifecycle.captureCharge>) =>
  answered(await lifecycle.captureCharge(...args), settledChargeAnswer, args[0]);
export const releaseCharge = async (...args: Parameters<typeof lifecycle.releaseCharge>) =>
  answered(await lifecycle.releaseCharge(...args), settledChargeAnswer);
export const refundCharge = async (...args: Parameters<typeof lifecycle.refundCharge>) =>
  answered(await lifecycle.refundCharge(...args), settledChargeAnswer, args[0]);
export const refundChargeByOperator = async (...args: Parameters<typeof lifecycle.refundChargeByOperator>) =>
  answered(await lifecycle.refundChargeByOperator(...args), settledChargeAnswer, args[0]);
