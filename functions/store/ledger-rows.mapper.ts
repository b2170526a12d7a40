/**
 * The ledger audit's typed rows, parsed from the raw items `scanLedgerItems` (audit.repository.ts)
 * returns: keys and attributes read once here, so the audit's checks (functions/audit) never see
 * a key or a raw attribute. Pure.
 */
import type { ChargeStatus } from '../core/charges';
import { CURRENCIES, CURRENCY_INFO, type Currency, isCurrency, type Minor } from '../core/money';
import type { PayoutStatus } from '../core/payouts';
import { owedAttribute } from './owed';
import { heldAttribute } from './payer';

type Item = Record<string, unknown>;

/**
 * The money-holding items of the table, by kind (raw attributes, as stored), as audit.repository.ts
 * `scanLedgerItems` reads them. Tests that tamper with stored items use these keys; the audit reads
 * `LedgerRows`. Defined here, beside the parser, so the repository imports the mapper and not the
 * other way round (no file cycle, test/architecture/layers.test.ts).
 */
export interface LedgerItems {
  /** `USER#…/USER`: balances per currency in minor units, and `held<currency>`: money in its PENDING charges. */
  users: Item[];
  /** `AGENTBAL#<agentId>#<n>/BAL`: one write shard of an agent's earned balance. */
  agentShards: Item[];
  /** `CREDITS#<userId>/<id>`: append-only admin top-ups (money in). */
  credits: Item[];
  /** `CHARGES#<agentId>/<chargeId>`. */
  charges: Item[];
  /** `PAYOUTS#<agentId>/<payoutId>`. */
  payouts: Item[];
  /** `PAYOUTLOCK#<agentId>#<currency>/LOCK`: an agent's in-flight payout lock for one currency. */
  payoutLocks: Item[];
  /** `PAYOUTLOCK#<agentId>#<currency>/FEES`: what the agent's counted payouts withdrew and paid in fees (core/fees.ts). */
  payoutFees?: Item[];
  /** `REVERSALS#<userId>/<refundId>`: money PayPal took back from a credited top-up (docs/topups.md). */
  reversals?: Item[];
  /** `X402PAY#<agentId>/<paymentId>`: x402 payments credited to an agent (money in, docs/x402.md). */
  x402Payments?: Item[];
  /** `X402TX#<messageHash>/SETTLEMENT`: x402 settlements, each what the chain confirmed into the treasury. */
  x402Settlements?: Item[];
  /** `GRANTS#<userId>/<grantId>`: a grant's `spent` and period counters, tied to its charges (docs/grants.md). */
  grants?: Item[];
  /** `TOPUPCREDIT#<rail>#<id>/CREDIT`: a top-up's credit-once guard (a Solana signature's: a transfer credited). */
  topupCredits?: Item[];
  /** `CHAINCREDIT#<signature>/CREDIT`: the cross-rail credit-once guard of a transfer (store/chain-credit.ts). */
  chainCredits?: Item[];
  /** `UNMATCHED#<signature>/UNMATCHED`: money in that credits no top-up, kept for an operator. */
  unmatched?: Item[];
  /** Items read in all (every kind, money-holding or not). */
  scanned: number;
  /** Scan requests sent (pages). */
  pages: number;
}

/**
 * A user's stored balances and held money (`USER#…/USER`, attributes `USD`, `USDC`, `heldUSD`,
 * `heldUSDC`; store/payer.ts `heldAttribute`). An amount that is not an integer is left out and
 * reported; an absent one is zero.
 */
export interface UserRow {
  kind: 'user';
  userId: string;
  balances: Partial<Record<Currency, Minor>>;
  /** Money moved from the balance into PENDING charges, per currency. */
  held: Partial<Record<Currency, Minor>>;
  /** What the payer owes after reversed top-ups (`owed<currency>`, store/owed.ts). */
  owed?: Partial<Record<Currency, Minor>>;
}

/** One write shard of an agent's earned balance (`AGENTBAL#<agentId>#<n>/BAL`). */
export interface ShardRow {
  kind: 'shard';
  agentId: string;
  /** The stored partition key, so a finding names the exact item to look at. */
  key: string;
  balances: Partial<Record<Currency, Minor>>;
}

/** An admin top-up (`CREDITS#<userId>/<id>`): money in. */
export interface CreditRow {
  kind: 'credit';
  userId: string;
  creditId: string;
  currency: Currency;
  amount: Minor;
  /** The part of a top-up's credit that paid what the payer owed: money out with a reversal. */
  owedRepaid?: Minor;
}

/** A reversed top-up (`REVERSALS#<userId>/<refundId>`): `debited` left the balance, `owed` is the shortfall. */
export interface ReversalRow {
  kind: 'reversal';
  userId: string;
  reversalId: string;
  currency: Currency;
  amount: Minor;
  debited: Minor;
  owed: Minor;
}

export interface ChargeRow {
  kind: 'charge';
  chargeId: string;
  agentId: string;
  userId: string;
  status: ChargeStatus;
  currency: Currency;
  amount: Minor;
  /** Holds (docs/lifecycle.md): what was authorized; `amount` is what was captured once SUCCESS. */
  authorizedAmount?: Minor;
  /** Given back by refunds, cumulative (0 when none). */
  refundedAmount: Minor;
  /** The operator's part of `refundedAmount` (its refunds and `return-earnings`), when it gave any back. */
  operatorRefundedAmount?: Minor;
  /** Made with a grant key (docs/grants.md): the grant whose `spent` counts it. */
  grantId?: string;
  /** The UTC day and month whose counters counted it (`counted`, or its `createdAt` on older items). */
  day?: string;
  month?: string;
  /** An x402 purchase (DESIGN §22): paid to a seller by the hot wallet, not to its agent; its transaction once captured. */
  purchase?: { transaction?: string };
}

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
}

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

/** An agent's fee basis in one currency (`PAYOUTLOCK#<agentId>#<currency>/FEES`, core/fees.ts). */
export interface FeeBasisRow {
  kind: 'feeBasis';
  agentId: string;
  currency: Currency;
  withdrawn: Minor;
  feesPaid: Minor;
}

/** An x402 payment credited to an agent (`X402PAY#<agentId>/<paymentId>`): USDC in. */
export interface X402PaymentRow {
  kind: 'x402Payment';
  agentId: string;
  paymentId: string;
  amount: Minor;
  /** The transaction signature it was credited for. */
  transaction: string;
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

/** A running counter of one UTC period on a grant item: `p` the day or month, `v` minor units. */
export interface PeriodCounter {
  p: string;
  v: Minor;
}

/**
 * A grant (`GRANTS#<userId>/<grantId>`, store/grant.repository.ts): what it has counted as spent,
 * in all and in its current UTC day and month (store/grant-charge.ts).
 */
export interface GrantRow {
  kind: 'grant';
  grantId: string;
  userId: string;
  agentId: string;
  currency: Currency;
  spent: Minor;
  spentDay?: PeriodCounter;
  spentMonth?: PeriodCounter;
}

/** An agent's in-flight payout lock for one currency (`PAYOUTLOCK#<agentId>#<currency>/LOCK`). */
export interface LockRow {
  kind: 'lock';
  agentId: string;
  currency: string;
  payoutId: string;
}

/** An item (or one attribute of it) that holds money but could not be read as a row. */
export interface UnreadableItem {
  /** The agent it belongs to, when known: the audit still counts that agent. */
  agentId?: string;
  problem: string;
}

/** The money-holding items of the table as typed rows, keys and attributes already parsed. */
export interface LedgerRows {
  users: UserRow[];
  shards: ShardRow[];
  credits: CreditRow[];
  charges: ChargeRow[];
  payouts: PayoutRow[];
  locks: LockRow[];
  feeBases: FeeBasisRow[];
  reversals: ReversalRow[];
  x402Payments: X402PaymentRow[];
  x402Settlements: X402SettlementRow[];
  grants: GrantRow[];
  /** What credited or recorded on-chain transfers (the wallet reconciliation, the cross-rail check). */
  onChain: { topupCredits: TopupChainCreditRow[]; chainCredits: ChainCreditRow[]; unmatched: UnmatchedRow[] };
  unreadable: UnreadableItem[];
  /** Items read of each money-holding kind, readable or not. */
  counts: { users: number; shards: number; credits: number; charges: number; payouts: number };
  /** Items read in all (every kind, money-holding or not). */
  scanned: number;
}

const CHARGE_STATUSES: ReadonlySet<string> = new Set<ChargeStatus>(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']);
const PAYOUT_STATUSES: ReadonlySet<string> = new Set<PayoutStatus>(['PENDING', 'PROCESSING', 'HELD', 'COMPLETED', 'FAILED']);

/**
 * The UTC day and month whose counters counted a charge: its `counted` record (store/charge-items.ts
 * `chargeItems`), or, on items written before it existed, the periods of its `createdAt` (as
 * core/charges.ts `countedOf` reads them).
 */
function periodsCounted(item: Item): { day?: string; month?: string } {
  const c = item.counted as Record<string, unknown> | undefined;
  if (c && typeof c === 'object' && typeof c.day === 'string' && typeof c.month === 'string') return { day: c.day, month: c.month };
  return typeof item.createdAt === 'string' ? { day: item.createdAt.slice(0, 10), month: item.createdAt.slice(0, 7) } : {};
}

/** The id after the kind prefix: `CREDITS#u1` → `u1`. */
const afterHash = (pk: unknown): string => String(pk ?? '').slice(String(pk ?? '').indexOf('#') + 1);
/** Rows written before the id attributes existed carry the id only in the key. */
const idOr = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);

/**
 * Parses raw items (as `scanLedgerItems` returns them) into typed rows. Pure. An attribute that
 * cannot hold money (a float, a string, an unknown currency or status) becomes a sentence in
 * `unreadable` naming the item; the rest of the item is kept when it still means something.
 */
export function toLedgerRows(items: Omit<LedgerItems, 'scanned' | 'pages'> & { scanned?: number }): LedgerRows {
  const unreadable: UnreadableItem[] = [];
  const note = (problem: string, agentId?: string) => unreadable.push(agentId === undefined ? { problem } : { agentId, problem });

  /** A whole number of minor units, or a note naming `where`. Absent counts as zero where `allowZero`. */
  const minor = (value: unknown, where: string, allowZero: boolean, agentId?: string): Minor | undefined => {
    if (typeof value === 'number' && Number.isSafeInteger(value) && (value > 0 || (allowZero && value === 0))) return value;
    if (value === undefined && allowZero) return 0;
    note(`${where}: ${JSON.stringify(value)} is not a valid amount in minor units`, agentId);
    return undefined;
  };
  const currencyOf = (item: Item, where: string, agentId?: string): Currency | undefined => {
    if (isCurrency(item.currency)) return item.currency;
    note(`${where}: unknown currency ${JSON.stringify(item.currency)}`, agentId);
    return undefined;
  };
  /** Stored balances may be negative (the audit says so); they must be whole minor units. */
  const balancesOf = (
    item: Item,
    where: string,
    agentId?: string,
    attribute = (c: Currency): string => c,
  ): Partial<Record<Currency, Minor>> => {
    const balances: Partial<Record<Currency, Minor>> = {};
    for (const c of CURRENCIES) {
      const value = item[attribute(c)];
      const amount =
        typeof value === 'number' && Number.isSafeInteger(value) ? value : minor(value, `${where} ${attribute(c)}`, true, agentId);
      if (amount !== undefined) balances[c] = amount;
    }
    return balances;
  };

  const credits: CreditRow[] = [];
  for (const item of items.credits) {
    const where = `credit ${String(item.PK)}/${String(item.SK)}`;
    const currency = currencyOf(item, where);
    const amount = minor(item.amount, where, false);
    const owedRepaid = minor(item.owedRepaid, `${where} owedRepaid`, true);
    if (!currency || amount === undefined || owedRepaid === undefined) continue;
    credits.push({
      kind: 'credit',
      userId: idOr(item.userId, afterHash(item.PK)),
      creditId: String(item.SK),
      currency,
      amount,
      ...(owedRepaid > 0 ? { owedRepaid } : {}),
    });
  }

  const reversals: ReversalRow[] = [];
  for (const item of items.reversals ?? []) {
    const where = `reversal ${String(item.PK)}/${String(item.SK)}`;
    const currency = currencyOf(item, where);
    const amount = minor(item.amount, `${where} amount`, false);
    const debited = minor(item.debited, `${where} debited`, true);
    const owed = minor(item.owed, `${where} owed`, true);
    if (!currency || amount === undefined || debited === undefined || owed === undefined) continue;
    reversals.push({
      kind: 'reversal',
      userId: idOr(item.userId, afterHash(item.PK)),
      reversalId: String(item.SK),
      currency,
      amount,
      debited,
      owed,
    });
  }

  const users: UserRow[] = items.users.map((item) => {
    const userId = idOr(item.userId, afterHash(item.PK));
    const owed = balancesOf(item, `user ${userId}`, undefined, owedAttribute);
    return {
      kind: 'user',
      userId,
      balances: balancesOf(item, `user ${userId}`),
      held: balancesOf(item, `user ${userId}`, undefined, heldAttribute),
      // Only payers who ever owed carry it (the rows of everyone else stay as they were).
      ...(Object.values(owed).some((v) => v !== 0) ? { owed } : {}),
    };
  });

  const shards: ShardRow[] = items.agentShards.map((item) => {
    const key = String(item.PK);
    // AGENTBAL#<agentId>#<shard>
    const agentId = idOr(item.agentId, key.split('#')[1] ?? key);
    return { kind: 'shard', agentId, key, balances: balancesOf(item, `shard ${key}`, agentId) };
  });

  const charges: ChargeRow[] = [];
  for (const item of items.charges) {
    const where = `charge ${String(item.SK)}`;
    // CHARGES#<agentId>#<shard>, or (written before the sharding) CHARGES#<agentId>.
    const agentId = idOr(item.agentId, String(item.PK).split('#')[1] ?? String(item.PK));
    if (!CHARGE_STATUSES.has(String(item.status))) {
      note(`${where}: unknown status ${JSON.stringify(item.status)}`, agentId);
      continue;
    }
    const currency = currencyOf(item, where, agentId);
    const amount = minor(item.amount, where, false, agentId);
    if (!currency || amount === undefined) continue;
    const status = String(item.status) as ChargeStatus;
    const refundedAmount = minor(item.refundedAmount, `${where} refundedAmount`, true, agentId);
    const authorizedAmount =
      item.authorizedAmount === undefined ? undefined : minor(item.authorizedAmount, `${where} authorizedAmount`, false, agentId);
    if (refundedAmount === undefined || (item.authorizedAmount !== undefined && authorizedAmount === undefined)) continue;
    const operatorRefundedAmount =
      item.operatorRefundedAmount === undefined
        ? undefined
        : minor(item.operatorRefundedAmount, `${where} operatorRefundedAmount`, true, agentId);
    charges.push({
      kind: 'charge',
      chargeId: String(item.SK),
      agentId,
      userId: String(item.userId),
      status,
      currency,
      amount,
      refundedAmount,
      ...(operatorRefundedAmount !== undefined ? { operatorRefundedAmount } : {}),
      ...(authorizedAmount !== undefined ? { authorizedAmount } : {}),
      ...(typeof item.grantId === 'string' ? { grantId: item.grantId, ...periodsCounted(item) } : {}),
      ...(item.purchase !== null && typeof item.purchase === 'object'
        ? {
            purchase:
              typeof (item.purchase as { transaction?: unknown }).transaction === 'string'
                ? { transaction: String((item.purchase as { transaction: string }).transaction) }
                : {},
          }
        : {}),
    });
  }

  const payouts: PayoutRow[] = [];
  for (const item of items.payouts) {
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
    });
  }

  const topupCredits: TopupChainCreditRow[] = [];
  for (const item of items.topupCredits ?? []) {
    const key = String(item.PK);
    if (!key.startsWith('TOPUPCREDIT#SOL#')) continue;
    const signature = key.slice('TOPUPCREDIT#SOL#'.length);
    const amount = minor(item.amount, `top-up credit guard ${key}`, false);
    if (amount === undefined) continue;
    topupCredits.push({ kind: 'topupChainCredit', signature, topupId: String(item.topupId), userId: String(item.userId), amount });
  }
  const chainCredits: ChainCreditRow[] = [];
  for (const item of items.chainCredits ?? []) {
    const signature = afterHash(item.PK);
    const amount = minor(item.amount, `chain credit guard ${String(item.PK)}`, false);
    if (amount === undefined) continue;
    chainCredits.push({ kind: 'chainCredit', signature, rail: String(item.rail), amount });
  }
  const unmatched: UnmatchedRow[] = (items.unmatched ?? []).map((item) => ({
    kind: 'unmatched',
    signature: afterHash(item.PK),
    reason: String(item.reason),
    mint: String(item.mint),
    amount: String(item.amount),
  }));

  const x402Payments: X402PaymentRow[] = [];
  for (const item of items.x402Payments ?? []) {
    const agentId = idOr(item.agentId, afterHash(item.PK));
    const amount = minor(item.amount, `x402 payment ${String(item.SK)}`, false, agentId);
    if (amount === undefined) continue;
    x402Payments.push({ kind: 'x402Payment', agentId, paymentId: String(item.SK), amount, transaction: String(item.transaction) });
  }
  const x402Settlements: X402SettlementRow[] = [];
  for (const item of items.x402Settlements ?? []) {
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

  const grants: GrantRow[] = [];
  for (const item of items.grants ?? []) {
    const grantId = idOr(item.grantId, String(item.SK));
    const where = `grant ${grantId}`;
    const currency = currencyOf(item, where);
    const spent = minor(item.spent, `${where} spent`, true);
    /** A period counter `{p, v}`; undefined when absent (no charge yet), null when unreadable (noted). */
    const counter = (name: 'spentDay' | 'spentMonth'): PeriodCounter | undefined | null => {
      const value = item[name] as Record<string, unknown> | null | undefined;
      if (value === undefined) return undefined;
      if (value === null || typeof value !== 'object' || typeof value.p !== 'string') {
        note(`${where} ${name}: ${JSON.stringify(value)} is not a period counter`);
        return null;
      }
      const v = minor(value.v, `${where} ${name}`, true);
      return v === undefined ? null : { p: value.p, v };
    };
    const spentDay = counter('spentDay');
    const spentMonth = counter('spentMonth');
    if (!currency || spent === undefined || spentDay === null || spentMonth === null) continue;
    grants.push({
      kind: 'grant',
      grantId,
      userId: idOr(item.userId, afterHash(item.PK)),
      agentId: String(item.agentId),
      currency,
      spent,
      ...(spentDay ? { spentDay } : {}),
      ...(spentMonth ? { spentMonth } : {}),
    });
  }

  const locks: LockRow[] = items.payoutLocks.map((item) => ({
    kind: 'lock',
    agentId: idOr(item.agentId, String(item.PK).split('#')[1] ?? ''),
    currency: typeof item.currency === 'string' ? item.currency : String(String(item.PK).split('#')[2]),
    payoutId: String(item.payoutId),
  }));

  const feeBases: FeeBasisRow[] = [];
  for (const item of items.payoutFees ?? []) {
    const agentId = idOr(item.agentId, String(item.PK).split('#')[1] ?? '');
    const where = `fee basis of agent ${agentId}`;
    const currency = currencyOf(item, where, agentId);
    const withdrawn = minor(item.withdrawn, `${where} withdrawn`, true, agentId);
    const feesPaid = minor(item.feesPaid, `${where} feesPaid`, true, agentId);
    if (!currency || withdrawn === undefined || feesPaid === undefined) continue;
    feeBases.push({ kind: 'feeBasis', agentId, currency, withdrawn, feesPaid });
  }

  return {
    users,
    shards,
    credits,
    charges,
    payouts,
    locks,
    feeBases,
    reversals,
    x402Payments,
    x402Settlements,
    grants,
    onChain: { topupCredits, chainCredits, unmatched },
    unreadable,
    counts: {
      users: items.users.length,
      shards: items.agentShards.length,
      credits: items.credits.length,
      charges: items.charges.length,
      payouts: items.payouts.length,
    },
    scanned: items.scanned ?? 0,
  };
}
