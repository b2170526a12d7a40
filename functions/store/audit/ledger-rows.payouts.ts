/**
 * The ledger audit's rows of payouts (ledger-rows.mapper.ts): each payout's gross, fees and the
 * Solana signatures it is known by, the agents' in-flight payout locks and their fee bases. Pure.
 */

import type { Currency, Minor } from '../../core/money';
import { CURRENCY_INFO } from '../../core/money';
import type { PayoutStatus } from '../../core/payouts';
import { PARTITIONS } from '../table';
import { afterHash, type Item, idOr, type RowReader } from './ledger-rows.reader';

export interface PayoutRow {
  kind: 'payout';
  payoutId: string;
  agentId: string;
  status: PayoutStatus;
  currency: Currency;
  /** Gross: what the agent's shards were debited. */
  amount: Minor;
  fee: Minor;
  /** What the agent paid for its token account to be created (0 when none; absent on the item). */
  accountCreationFee: Minor;
  netAmount: Minor;
  /**
   * USDC: the Solana signatures it is known by (`externalId`, `txHash`, and while in flight the
   * signed transaction's, `railState.signature`): the hot wallet's outflow it stands for.
   */
  signatures?: string[];
  /** Its fee was computed from, and added to, the agent's fee basis (core/fees.ts; absent on older payouts). */
  feeCounted?: boolean;
  /** A refund of this x402 payment (DESIGN §28): no fee, no lock, net = gross. */
  refundOf?: string;
}

/** An agent's in-flight payout lock for one currency (`PAYOUTLOCK#<agentId>#<currency>/LOCK`). */
export interface LockRow {
  kind: 'lock';
  agentId: string;
  currency: string;
  payoutId: string;
}

/** An agent's fee basis in one currency (`PAYOUTLOCK#<agentId>#<currency>/FEES`, core/fees.ts). */
export interface FeeBasisRow {
  kind: 'feeBasis';
  agentId: string;
  currency: Currency;
  withdrawn: Minor;
  feesPaid: Minor;
}

const PAYOUT_STATUSES: ReadonlySet<string> = new Set<PayoutStatus>(['PENDING', 'PROCESSING', 'HELD', 'COMPLETED', 'FAILED']);

/** A payout each; one of unknown status is noted and left out. */
export function payoutRows(items: readonly Item[], reader: RowReader): PayoutRow[] {
  const { note, minor, currencyOf } = reader;
  const payouts: PayoutRow[] = [];
  for (const item of items) {
    const payoutId = String(item.SK);
    const where = `payout ${payoutId}`;
    const agentId = idOr(item.agentId, afterHash(item.PK));
    if (!PAYOUT_STATUSES.has(String(item.status))) {
      note(`${where}: unknown status ${JSON.stringify(item.status)}`, agentId);
      continue;
    }
    const currency = currencyOf(item, where, agentId);
    const amount = minor(item.amount, `${where} amount`, false, agentId);
    const fee = minor(item.fee, `${where} fee`, true, agentId);
    const accountCreationFee = minor(item.accountCreationFee, `${where} accountCreationFee`, true, agentId);
    const netAmount = minor(item.netAmount, `${where} netAmount`, true, agentId);
    if (!currency || amount === undefined || fee === undefined || accountCreationFee === undefined || netAmount === undefined) continue;
    const status = String(item.status) as PayoutStatus;
    const railState = item.railState as Record<string, unknown> | undefined;
    const signatures = CURRENCY_INFO[currency].onChain
      ? [...new Set([item.externalId, item.txHash, railState?.signature].filter((v): v is string => typeof v === 'string' && v !== ''))]
      : [];
    payouts.push({
      kind: 'payout',
      payoutId,
      agentId,
      status,
      currency,
      amount,
      fee,
      accountCreationFee,
      netAmount,
      ...(signatures.length > 0 ? { signatures } : {}),
      ...(item.feeCounted === true ? { feeCounted: true } : {}),
      ...(String(item.PK).startsWith(PARTITIONS.x402Refund) ? { refundOf: String(item.paymentId ?? '') } : {}),
    });
  }
  return payouts;
}

/** The agents' in-flight payout locks. */
export function lockRows(items: readonly Item[]): LockRow[] {
  const locks: LockRow[] = items.map((item) => ({
    kind: 'lock',
    agentId: idOr(item.agentId, String(item.PK).split('#')[1] ?? ''),
    currency: typeof item.currency === 'string' ? item.currency : String(String(item.PK).split('#')[2]),
    payoutId: String(item.payoutId),
  }));
  return locks;
}

/** The agents' fee bases, one per currency. */
export function feeBasisRows(items: readonly Item[], reader: RowReader): FeeBasisRow[] {
  const { minor, currencyOf } = reader;
  const feeBases: FeeBasisRow[] = [];
  for (const item of items) {
    const agentId = idOr(item.agentId, String(item.PK).split('#')[1] ?? '');
    const where = `fee basis of agent ${agentId}`;
    const currency = currencyOf(item, where, agentId);
    const withdrawn = minor(item.withdrawn, `${where} withdrawn`, true, agentId);
    const feesPaid = minor(item.feesPaid, `${where} feesPaid`, true, agentId);
    if (!currency || withdrawn === undefined || feesPaid === undefined) continue;
    feeBases.push({ kind: 'feeBasis', agentId, currency, withdrawn, feesPaid });
  }
  return feeBases;
}
