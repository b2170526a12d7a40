/**
 * The statement entry of a movement of a payer's balance (docs/statement.md), a Put in the SAME
 * TransactWriteItems as the movement itself: the entry exists exactly when the balance moved, so a
 * payer's entries sum to their balance under any race, with no stream and nothing to catch up.
 * Every writer of the user item's `USD`/`USDC` adds one (charge, hold, settlement, refund, top-up
 * credit, reversal, operator credit); the builders below say, per kind of movement, its type, its
 * signed amount and what it refers to. The counterparty's name is stored with it: a page reads no
 * agent or seller.
 */
import { config } from '../../config';
import type { Charge } from '../../core/charges';
import { newRecordId } from '../../core/ids';
import { type Currency, formatAmount, type Minor } from '../../core/money';
import { purchaseIdOf } from '../../core/purchases';
import { type Counterparty, type StatementEntry, type StatementType, sellerOf } from '../../core/statement';
import { keys } from '../table';
import type { TransactItem } from '../transact';

/** The entry's Put: a new ULID's key, never overwriting (a ULID is not made twice). */
export function statementPut(entry: StatementEntry): TransactItem {
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.statement(entry.userId, entry.entryId),
        type: 'StatementEntry',
        entryType: entry.type,
        userId: entry.userId,
        createdAt: entry.createdAt,
        amount: entry.amount,
        currency: entry.currency,
        status: entry.status,
        description: entry.description,
        counterparty: entry.counterparty,
        reference: entry.reference,
        ...(entry.agentId !== undefined ? { agentId: entry.agentId } : {}),
        ...(entry.grantId !== undefined ? { grantId: entry.grantId } : {}),
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

/** An entry as stored, read back. */
export function toStatementEntry(item: Record<string, unknown>): StatementEntry {
  const counterparty = (item.counterparty ?? {}) as Partial<Counterparty>;
  return {
    entryId: String(item.SK),
    userId: String(item.userId),
    createdAt: String(item.createdAt),
    type: item.entryType as StatementType,
    amount: Number(item.amount),
    currency: item.currency as Currency,
    status: String(item.status ?? ''),
    description: String(item.description ?? ''),
    counterparty: {
      kind: counterparty.kind ?? 'agent',
      id: String(counterparty.id ?? ''),
      name: String(counterparty.name ?? counterparty.id ?? ''),
    },
    reference: String(item.reference ?? ''),
    ...(typeof item.agentId === 'string' ? { agentId: item.agentId } : {}),
    ...(typeof item.grantId === 'string' ? { grantId: item.grantId } : {}),
  };
}

/** The fields of a charge (or its pending marker) an entry takes. */
interface ChargeLike {
  chargeId: string;
  agentId: string;
  userId: string;
  currency: Currency;
  description?: string | undefined;
  agentName?: string | undefined;
  grantId?: string | undefined;
  /** An x402 purchase's hold: the seller, where known. */
  purchase?: boolean | undefined;
  seller?: Counterparty | undefined;
}

/** Who a charge's money went to: the agent, or for an x402 purchase the seller (its host, else its address). */
function chargeCounterparty(c: ChargeLike): Counterparty {
  if (c.purchase) return c.seller ?? { kind: 'seller', id: c.agentId, name: c.agentName ?? c.agentId };
  return { kind: 'agent', id: c.agentId, name: c.agentName ?? c.agentId };
}

function chargeLikeOf(charge: Charge): ChargeLike {
  return {
    chargeId: charge.id,
    agentId: charge.agentId,
    userId: charge.userId,
    currency: charge.currency,
    description: charge.description,
    agentName: charge.agentName,
    grantId: charge.grantId,
    purchase: charge.purchase !== undefined,
    seller: sellerOf(charge),
  };
}

function entryOf(c: ChargeLike, type: StatementType, amount: Minor, status: string, now: Date, description?: string): StatementEntry {
  return {
    entryId: newRecordId(),
    userId: c.userId,
    createdAt: now.toISOString(),
    type,
    amount,
    currency: c.currency,
    status,
    description: description ?? c.description ?? '',
    counterparty: chargeCounterparty(c),
    // A purchase is known to its payer by its purchase id.
    reference: c.purchase ? purchaseIdOf(c.chargeId) : c.chargeId,
    agentId: c.agentId,
    ...(c.grantId !== undefined ? { grantId: c.grantId } : {}),
  };
}

/**
 * An accepted charge's debit of the available balance: `charge` (SUCCESS), `hold` (PENDING: a hold
 * or a charge waiting for its payer's approval, the amount moved to held), `x402_purchase` (a
 * purchase's hold).
 */
export function chargeEntry(charge: Charge, hold: boolean, now: Date): StatementEntry {
  const type: StatementType = charge.purchase ? 'x402_purchase' : hold ? 'hold' : 'charge';
  return entryOf(chargeLikeOf(charge), type, -charge.amount, charge.status, now);
}

/** What a settlement gave back to the available balance (a release, decline, expiry, a capture's rest). */
export function holdReleaseEntry(
  pending: {
    chargeId: string;
    agentId: string;
    userId: string;
    currency: Currency;
    description?: string | undefined;
    agentName?: string | undefined;
    grantId?: string | undefined;
    purchase?: true | undefined;
  },
  returned: Minor,
  status: string,
  now: Date,
  seller?: Counterparty,
): StatementEntry {
  return entryOf({ ...pending, purchase: pending.purchase === true, seller }, 'hold_release', returned, status, now);
}

/** A refund of a SUCCESS charge back to its payer (by the agent or the operator). */
export function refundEntry(charge: Charge, amount: Minor, now: Date): StatementEntry {
  return entryOf(chargeLikeOf(charge), 'refund', amount, 'REFUNDED', now, charge.description);
}

/** The operator's credit (admin credit): its credit record's id is the reference. */
export function operatorCreditEntry(userId: string, creditId: string, amount: Minor, currency: Currency, now: Date): StatementEntry {
  return {
    entryId: newRecordId(),
    userId,
    createdAt: now.toISOString(),
    type: 'credit',
    amount,
    currency,
    status: 'COMPLETED',
    description: 'Credit by the operator',
    counterparty: { kind: 'operator', id: 'operator', name: 'Operator' },
    reference: creditId,
  };
}

const RAILS = {
  PAYPAL: { kind: 'rail', id: 'paypal', name: 'PayPal' },
  SOL: { kind: 'rail', id: 'solana', name: 'USDC on Solana' },
} as const satisfies Record<string, Counterparty>;

/**
 * A top-up's credit: what reached the balance (`toBalance`); the part that paid what the payer
 * owed after a reversal never reached it, and the description says so.
 */
export function topupEntry(
  topup: { id: string; userId: string },
  payment: { rail: 'SOL' | 'PAYPAL'; amount: Minor; currency: Currency },
  toBalance: Minor,
  now: Date,
): StatementEntry {
  const repaid = payment.amount - toBalance;
  return {
    entryId: newRecordId(),
    userId: topup.userId,
    createdAt: now.toISOString(),
    type: 'topup',
    amount: toBalance,
    currency: payment.currency,
    status: 'COMPLETED',
    description: repaid > 0 ? `Top-up (${formatAmount(repaid, payment.currency)} ${payment.currency} of it paid what was owed)` : 'Top-up',
    counterparty: RAILS[payment.rail],
    reference: topup.id,
  };
}

/**
 * PayPal took a credited top-up back: `debited` left the balance (at most what it held); the rest
 * is owed, which the description says (owed money is not the available balance's).
 */
export function reversalEntry(
  credit: { userId: string; topupId: string; currency: Currency },
  refundId: string,
  debited: Minor,
  owed: Minor,
  now: Date,
): StatementEntry {
  return {
    entryId: newRecordId(),
    userId: credit.userId,
    createdAt: now.toISOString(),
    type: 'reversal',
    amount: -debited,
    currency: credit.currency,
    status: 'COMPLETED',
    description:
      owed > 0
        ? `Top-up ${credit.topupId} reversed by PayPal (${formatAmount(owed, credit.currency)} ${credit.currency} owed)`
        : `Top-up ${credit.topupId} reversed by PayPal`,
    counterparty: RAILS.PAYPAL,
    reference: refundId,
  };
}
