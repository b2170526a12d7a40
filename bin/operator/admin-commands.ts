/**
 * What each `npm run admin` command does: one call of the use case the admin API calls, with the
 * input checked by the API's own schemas, so the CLI and the API accept the same input, answer the
 * same JSON and refuse with the same messages. Loaded only once the table is settled (the config
 * module reads the environment once).
 */

import { isNumber, LosslessNumber } from 'lossless-json';
import { runLedgerAudit } from '../../functions/audit/ledger-audit';
import { config } from '../../functions/config';
import { type ApiResult, StoredReply } from '../../functions/contracts/api';
import { serialize } from '../../functions/contracts/json';
import { renderRefusal } from '../../functions/contracts/outcome';
import {
  adminListPayoutsQuerySchema,
  creditSchema,
  listAgentsQuerySchema,
  listChargesQuerySchema,
  refundChargeSchema,
} from '../../functions/contracts/request.schemas';
import { validate } from '../../functions/contracts/validation';
import { purchaseView } from '../../functions/contracts/views';
import { X402UnavailableError } from '../../functions/core/x402';
import { isRefusal } from '../../functions/messages/refusal';
import { agentAnswer, agentPageAnswer, agentWithBalanceAnswer } from '../../functions/operations/admin-agents';
import { adminCancelPayoutOperation, payoutAnswer, payoutPageAnswer } from '../../functions/operations/admin-payouts';
import { adminRefundChargeOperation } from '../../functions/operations/admin-refund';
import { adminCreateUserOperation, adminCreditUserOperation, userAnswer } from '../../functions/operations/admin-users';
import { chargeAnswer, chargePageAnswer } from '../../functions/operations/charges';
import type { RenderContext } from '../../functions/operations/operation';
import { readCharge } from '../../functions/use-cases/charges/charges';
import { refundChargeByOperator } from '../../functions/use-cases/charges/lifecycle';
import { listChargesForOperator } from '../../functions/use-cases/charges/operator-earnings';
import { checkIdempotencyKey } from '../../functions/use-cases/idempotency';
import { listAgentsForOperator, readAgent, updateAgentEnabled } from '../../functions/use-cases/identity/agents';
import {
  createUserWithKey as createUser,
  creditUserBalance,
  readUser as readUserUseCase,
  rotateUserKeyByOperator,
} from '../../functions/use-cases/identity/users';
import { cancelPayout as cancelHeld, listPayoutsForOperator, releasePayout } from '../../functions/use-cases/payouts/payout-holds';
import { resolvePurchase as resolveSignedPurchase } from '../../functions/use-cases/x402-purchases/purchase-reconcile';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { type Answer, answer as answerText } from './answer';
import { type EarningsApi, returnEarnings as walkEarnings } from './return-earnings';

export { rotateUserKeyByOperator, runLedgerAudit };

/** A user with zero balances and its key, shown once, as `POST /admin/users` answers it. */
export const createUserWithKey = async () => adminCreateUserOperation.render(await createUser(), links());

/** A user's balances, as `GET /admin/users/{id}` answers them. */
export const readUser = async (userId: string | undefined) => userAnswer(await readUserUseCase(userId));

export const enableAgent = async (agentId: string) => agentAnswer(await updateAgentEnabled(agentId, true));
export const disableAgent = async (agentId: string) => agentAnswer(await updateAgentEnabled(agentId, false));

/**
 * Tops up a user, as `POST /admin/users/{id}/credits` does. `amount` is the decimal text the
 * operator typed; it reaches the use case as that exact text, never through a float.
 */
export async function credit(userId: string, amount: string, currency: string, idempotencyKey: string): Promise<ApiResult> {
  // The API reads amounts as JSON number literals; text that is not one fails its schema the same way.
  const body = validate(creditSchema, { amount: isNumber(amount) ? new LosslessNumber(amount) : amount, currency });
  return rendered(
    await creditUserBalance({ userId, idempotencyKey: checkIdempotencyKey(idempotencyKey), ...body }),
    adminCreditUserOperation.render,
  );
}

/** An agent and its withdrawable balance, as the operator sees it. */
export const showAgent = async (agentId: string) => agentWithBalanceAnswer(await readAgent(agentId));

/** Agents newest first, as `GET /admin/agents?enabled=&limit=&cursor=` lists them (the query checked by the API's schema). */
export const listAgents = async (query: Record<string, string>) =>
  agentPageAnswer(await listAgentsForOperator(validate(listAgentsQuerySchema, query)));

/** Any agent's charge, as `GET /admin/charges/{id}` reads it. */
export const showCharge = async (chargeId: string) => chargeAnswer(await readCharge(undefined, chargeId), links());

/** Payouts held because their agent was disabled, oldest first (`GET /admin/payouts?status=HELD`). */
export const heldPayouts = async () =>
  payoutPageAnswer(await listPayoutsForOperator(validate(adminListPayoutsQuerySchema, { limit: '100' })), links());

/** A held payout paid after all (`POST /admin/agents/{id}/payouts/{payoutId}/release`). */
export const releaseHeldPayout = async (agentId: string, payoutId: string) => payoutAnswer(await releasePayout(agentId, payoutId));

/** A held payout cancelled, its gross back to the agent (`POST …/payouts/{payoutId}/cancel`). */
export const cancelHeldPayout = async (agentId: string, payoutId: string, idempotencyKey: string) =>
  rendered(await cancelHeld({ agentId, payoutId, idempotencyKey: checkIdempotencyKey(idempotencyKey) }), adminCancelPayoutOperation.render);

/**
 * A charge given back to its payer from the agent's earned balance (`POST …/charges/{chargeId}/refund`):
 * all that is left, or `amount` (decimal text, read exactly as the API reads a JSON number).
 */
export async function refundCharge(
  agentId: string,
  chargeId: string,
  amount: string | undefined,
  idempotencyKey: string,
): Promise<ApiResult> {
  const body = validate(refundChargeSchema, amount === undefined ? {} : { amount: isNumber(amount) ? new LosslessNumber(amount) : amount });
  return rendered(
    await refundChargeByOperator({ agentId, chargeId, idempotencyKey: checkIdempotencyKey(idempotencyKey), ...links(), ...body }),
    adminRefundChargeOperation.render,
  );
}

/**
 * A signed x402 purchase the reconciler cannot reach, settled (use-cases/x402-purchases/purchase-reconcile.ts
 * `resolvePurchase`): the hot wallet token account's history searched without a limit, then
 * captured or released in the reconciler's own transaction. `id`: the purchase's (`xp…`) or its
 * hold's (`c…`). Reads the chain the service is configured with (SOLANA_RPC_URL or its secret).
 */
export async function resolvePurchase(id: string): Promise<Answer> {
  const chain = await purchaseChain().catch((error: unknown) => {
    throw error instanceof X402UnavailableError ? new NoChainError() : error;
  });
  const done = await resolveSignedPurchase(id, chain);
  return answer({
    statusCode: 200,
    body: {
      resolved: done.resolved,
      chargeId: done.purchase.id,
      agentId: done.purchase.agentId,
      userId: done.purchase.userId,
      signaturesRead: done.signaturesRead,
      purchase: purchaseView(done.purchase, links().baseUrl),
    },
  });
}

/** The operator's environment names no chain to search (the service's x402 settings are absent). */
class NoChainError extends Error {
  constructor() {
    super(
      "no chain configured: set SOLANA_RPC_URL (or SOLANA_RPC_URL_SECRET_ARN), SOLANA_HOT_WALLET_ADDRESS and USDC_MINT as the service has them, or --local for npm start's",
    );
    this.name = 'NoChainError';
  }
}

/** Every charge of the agent given back as far as its balance goes (bin/operator/return-earnings.ts), in-process. */
export function returnEarnings(agentId: string): Promise<Answer> {
  const api: EarningsApi = {
    listCharges: (id, cursor) =>
      answerOf(async () =>
        chargePageAnswer(
          await listChargesForOperator(id, validate(listChargesQuerySchema, { limit: '100', ...(cursor ? { cursor } : {}) })),
          links(),
        ),
      ),
    refund: (id, chargeId, key) =>
      answerOf(async () =>
        rendered(
          await refundChargeByOperator({ agentId: id, chargeId, idempotencyKey: key, ...links() }),
          adminRefundChargeOperation.render,
        ),
      ),
  };
  return walkEarnings(agentId, api);
}

/** A use case's answer, or its refusal as the API would send it (the walk goes on past a refusal). */
async function answerOf(run: () => Promise<ApiResult>): Promise<Answer> {
  try {
    return answer(await run());
  } catch (error) {
    if (!isRefusal(error)) throw error;
    const refusal = renderRefusal(error);
    return answerText(refusal.status, serialize({ error: refusal.text }));
  }
}

/** An outcome as its route renders it, or an earlier answer under the same Idempotency-Key as it is sent again. */
function rendered<O>(outcome: O | StoredReply, render: (outcome: O, context: RenderContext) => ApiResult): ApiResult {
  return outcome instanceof StoredReply ? outcome.toResult() : render(outcome, links());
}

/**
 * The receipt links' address (DESIGN §27) as the API's would be: PUBLIC_BASE_URL when the
 * operator's environment sets it, else paths (`/api/v1/receipts/…`) on whatever address serves the API.
 */
function links(): RenderContext {
  return { baseUrl: config().PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? '' };
}

/** A use case's answer as the API would send it (answer.ts prints it). */
export function answer(result: ApiResult): Answer {
  return answerText(result.statusCode, result.rawBody ?? serialize(result.body ?? {}));
}

/** A refusal in the words the API would use; anything else (DynamoDB unreachable, no table) with its name. */
export function describeError(error: unknown): string {
  if (isRefusal(error)) return renderRefusal(error).text;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
