/**
 * The ledger audit's rows of money that arrived on chain (ledger-rows.mapper.ts): the credit-once
 * guards of Solana transfers, transfers that credited nobody, and x402 payments and settlements —
 * what the wallet reconciliation (audit/chain-checks.ts) holds against the chain. Pure.
 */
import type { Minor } from '../../core/money';
import { afterHash, type Item, idOr, type RowReader } from './ledger-rows.reader';

/** A Solana transfer credited to a top-up: its guard `TOPUPCREDIT#SOL#<signature>` names the top-up, payer and amount. */
export interface TopupChainCreditRow {
  kind: 'topupChainCredit';
  signature: string;
  topupId: string;
  userId: string;
  amount: Minor;
}

/** The cross-rail credit-once guard of a transfer (`CHAINCREDIT#<signature>`): which rail credited it, and how much. */
export interface ChainCreditRow {
  kind: 'chainCredit';
  signature: string;
  rail: string;
  amount: Minor;
}

/** A Solana payment recorded unmatched (`UNMATCHED#<signature>`): in the deposit wallet, credited to nobody. */
export interface UnmatchedRow {
  kind: 'unmatched';
  signature: string;
  reason: string;
  mint: string;
  /** Raw units of `mint`, as recorded. */
  amount: string;
}

/** An x402 payment credited to an agent (`X402PAY#<agentId>/<paymentId>`): USDC in. */
export interface X402PaymentRow {
  kind: 'x402Payment';
  agentId: string;
  paymentId: string;
  amount: Minor;
  /** The transaction signature it was credited for. */
  transaction: string;
  /** What its refunds took back (DESIGN §28; absent when none): the refunds that were not FAILED add up to it. */
  refunded?: Minor;
}

/** An x402 settlement (`X402TX#<messageHash>/SETTLEMENT`): its state and, once CREDITED, its payment. */
export interface X402SettlementRow {
  kind: 'x402Settlement';
  signature: string;
  agentId: string;
  status: string;
  amount: Minor;
  paymentId?: string;
}

/** The Solana top-ups' credit-once guards (other rails' guards hold no transfer). */
export function topupCreditRows(items: readonly Item[], reader: RowReader): TopupChainCreditRow[] {
  const { minor } = reader;
  const topupCredits: TopupChainCreditRow[] = [];
  for (const item of items) {
    const key = String(item.PK);
    if (!key.startsWith('TOPUPCREDIT#SOL#')) continue;
    const signature = key.slice('TOPUPCREDIT#SOL#'.length);
    const amount = minor(item.amount, `top-up credit guard ${key}`, false);
    if (amount === undefined) continue;
    topupCredits.push({ kind: 'topupChainCredit', signature, topupId: String(item.topupId), userId: String(item.userId), amount });
  }
  return topupCredits;
}

/** The cross-rail credit-once guards. */
export function chainCreditRows(items: readonly Item[], reader: RowReader): ChainCreditRow[] {
  const { minor } = reader;
  const chainCredits: ChainCreditRow[] = [];
  for (const item of items) {
    const signature = afterHash(item.PK);
    const amount = minor(item.amount, `chain credit guard ${String(item.PK)}`, false);
    if (amount === undefined) continue;
    chainCredits.push({ kind: 'chainCredit', signature, rail: String(item.rail), amount });
  }
  return chainCredits;
}

/** Money in that credits no top-up. */
export function unmatchedRows(items: readonly Item[]): UnmatchedRow[] {
  const unmatched: UnmatchedRow[] = items.map((item) => ({
    kind: 'unmatched',
    signature: afterHash(item.PK),
    reason: String(item.reason),
    mint: String(item.mint),
    amount: String(item.amount),
  }));
  return unmatched;
}

/** The x402 payments credited to agents. */
export function x402PaymentRows(items: readonly Item[], reader: RowReader): X402PaymentRow[] {
  const { minor } = reader;
  const x402Payments: X402PaymentRow[] = [];
  for (const item of items) {
    const agentId = idOr(item.agentId, afterHash(item.PK));
    const amount = minor(item.amount, `x402 payment ${String(item.SK)}`, false, agentId);
    const refunded = minor(item.refunded, `x402 payment ${String(item.SK)} refunded`, true, agentId);
    if (amount === undefined || refunded === undefined) continue;
    x402Payments.push({
      kind: 'x402Payment',
      agentId,
      paymentId: String(item.SK),
      amount,
      transaction: String(item.transaction),
      ...(refunded > 0 ? { refunded } : {}),
    });
  }
  return x402Payments;
}

/** The x402 settlements. */
export function x402SettlementRows(items: readonly Item[], reader: RowReader): X402SettlementRow[] {
  const { minor } = reader;
  const x402Settlements: X402SettlementRow[] = [];
  for (const item of items) {
    const signature = idOr(item.signature, afterHash(item.PK));
    const agentId = String(item.agentId);
    const amount = minor(item.amount, `x402 settlement ${signature}`, false, agentId);
    if (amount === undefined) continue;
    x402Settlements.push({
      kind: 'x402Settlement',
      signature,
      agentId,
      status: String(item.status),
      amount,
      ...(typeof item.paymentId === 'string' ? { paymentId: item.paymentId } : {}),
    });
  }
  return x402Settlements;
}
