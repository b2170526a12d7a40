/**
 * Charges: their commit. A charge is ONE TransactWriteItems, whose items are built in one place
 * from the decision (store/charges/charge-items.ts: what each item is, its condition and what a failure of
 * it means); this writes them. How a PENDING charge ends: charge-settlement.repository.ts; the
 * agent's capture, release and refunds: charge-lifecycle.repository.ts; reads: charge-read.repository.ts.
 */

import { transactWrite } from '../transact';
import {
  type ChargeWrite,
  chargeItems,
  chargeTransaction,
  type RefusedChargeWrite,
  refusedChargeItems,
  refusedChargeTransaction,
} from './charge-items';

/**
 * Commits an accepted charge: SUCCESS, or PENDING (the amount held) when the decision says so.
 * Throws, in this order of precedence: IdempotencyRecordExistsError (a replay wins: the first
 * request's answer is the answer), AgentDisabledError (the credited shard's kill switch), then
 * what the grant item says (UserKeyRevokedError, GrantPeriodsChangedError to retry,
 * SpendingLimitError), then what the user's item says (UserKeyRevokedError,
 * PayerStateChangedError to retry, SpendingLimitError, InsufficientFundsError), or
 * BalanceLimitError when the agent's shard is at its cap.
 */
export async function commitCharge(write: ChargeWrite): Promise<void> {
  await transactWrite(chargeTransaction(chargeItems(write)));
}

/**
 * Keeps a FAILED charge (refused: its `failureReason` says why) with its idempotency record; moves
 * no money. Throws IdempotencyRecordExistsError, AgentDisabledError, UserKeyRevokedError (a grant
 * no longer active), PayerStateChangedError (a policy refusal judged under a stale policy).
 */
export async function recordFailedCharge(write: RefusedChargeWrite): Promise<void> {
  await transactWrite(refusedChargeTransaction(refusedChargeItems(write)));
}
