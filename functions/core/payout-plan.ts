/**
 * The withdrawal's decision (docs/payouts.md): from the agent's shards and fee basis as read, what
 * a withdrawal of `gross` costs and which shards pay it, or why it is refused. Pure: the use case
 * reads, the store commits the plan under conditions that refuse it if a shard or the basis moved.
 */
import { type FeeBasis, NO_FEE_BASIS, type WithdrawalFees, withdrawalFees } from './fees';
import { type AgentLedger, planShardDebit, type ShardDebit } from './ledger';
import type { Currency, Minor } from './money';

export type WithdrawalPlan =
  | { kind: 'plan'; fees: WithdrawalFees; debits: ShardDebit[] }
  /** In this order: the fees (cumulative 3% and the account-creation fee) leave nothing to pay (400), the shards hold too little (400). */
  | { kind: 'refused'; reason: 'too-small' | 'insufficient' };

/**
 * A withdrawal of `gross` in `currency`: the fee is the cumulative 3% after `basis`
 * (core/fees.ts `cumulativeFee`), plus `accountCreationFee` when the payout creates the token
 * account; a net at or below zero is refused before the balance is looked at; the gross is then
 * debited across the shards, largest first.
 */
export function planWithdrawal(opts: {
  ledger: AgentLedger;
  currency: Currency;
  gross: Minor;
  accountCreationFee?: Minor;
  basis?: FeeBasis;
}): WithdrawalPlan {
  const fees = withdrawalFees(opts.gross, opts.accountCreationFee ?? 0, opts.basis ?? NO_FEE_BASIS);
  if (fees.net <= 0) return { kind: 'refused', reason: 'too-small' };
  const debits = planShardDebit(opts.ledger, opts.currency, opts.gross);
  return debits ? { kind: 'plan', fees, debits } : { kind: 'refused', reason: 'insufficient' };
}
