/**
 * The ledger audit's typed rows, parsed from the raw items `scanLedgerItems` (audit.repository.ts)
 * returns: keys and attributes read once here, so the audit's checks (functions/audit) never see
 * a key or a raw attribute. Each kind of movement has its parser and row types beside it
 * (ledger-rows.balances.ts, .charges.ts, .payouts.ts, .chain.ts), all reading through one
 * ledger-rows.reader.ts; this file names the whole and puts it together. Pure.
 */

import {
  type CreditRow,
  creditRows,
  type ReversalRow,
  reversalRows,
  type ShardRow,
  type StatementRow,
  shardRows,
  statementRows,
  type UserRow,
  userRows,
} from './ledger-rows.balances';
import {
  type ChainCreditRow,
  chainCreditRows,
  type TopupChainCreditRow,
  topupCreditRows,
  type UnmatchedRow,
  unmatchedRows,
  type X402PaymentRow,
  type X402SettlementRow,
  x402PaymentRows,
  x402SettlementRows,
} from './ledger-rows.chain';
import { type ChargeRow, chargeRows, type GrantRow, grantRows } from './ledger-rows.charges';
import { type FeeBasisRow, feeBasisRows, type LockRow, lockRows, type PayoutRow, payoutRows } from './ledger-rows.payouts';
import { type Item, rowReader, type UnreadableItem } from './ledger-rows.reader';
import { type TabRow, type TabUsageRow, tabRows, tabUsageRows } from './ledger-rows.tabs';

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
  /** `CHAINCREDIT#<signature>/CREDIT`: the cross-rail credit-once guard of a transfer (store/topups/chain-credit.ts). */
  chainCredits?: Item[];
  /** `UNMATCHED#<signature>/UNMATCHED`: money in that credits no top-up, kept for an operator. */
  unmatched?: Item[];
  /** `TAB#<tabId>/TAB` and its uses (`TAB#<tabId>/U#<key>`): tied to the tab's hold (DESIGN §29). */
  tabs?: Item[];
  tabUsages?: Item[];
  /** `STMT#<userId>/<ulid>`: a payer's statement entries (docs/statement.md), each a movement of their balance. */
  statements?: Item[];
  /** Items read in all (every kind, money-holding or not). */
  scanned: number;
  /** Scan requests sent (pages). */
  pages: number;
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
  tabs: TabRow[];
  tabUsages: TabUsageRow[];
  /** The payers' statement entries: their sum per payer is the balance (for payers with `statementFrom`). */
  statements: StatementRow[];
  /** What credited or recorded on-chain transfers (the wallet reconciliation, the cross-rail check). */
  onChain: { topupCredits: TopupChainCreditRow[]; chainCredits: ChainCreditRow[]; unmatched: UnmatchedRow[] };
  unreadable: UnreadableItem[];
  /** Items read of each money-holding kind, readable or not. */
  counts: { users: number; shards: number; credits: number; charges: number; payouts: number };
  /** Items read in all (every kind, money-holding or not). */
  scanned: number;
}

/**
 * Parses raw items (as `scanLedgerItems` returns them) into typed rows. Pure. An attribute that
 * cannot hold money (a float, a string, an unknown currency or status) becomes a sentence in
 * `unreadable` naming the item; the rest of the item is kept when it still means something.
 */
export function toLedgerRows(items: Omit<LedgerItems, 'scanned' | 'pages'> & { scanned?: number }): LedgerRows {
  // One reader for all: its sentences stay in the order the kinds are read here.
  const reader = rowReader();
  const credits = creditRows(items.credits, reader);
  const reversals = reversalRows(items.reversals ?? [], reader);
  const users = userRows(items.users, reader);
  const shards = shardRows(items.agentShards, reader);
  const charges = chargeRows(items.charges, reader);
  const payouts = payoutRows(items.payouts, reader);
  const topupCredits = topupCreditRows(items.topupCredits ?? [], reader);
  const chainCredits = chainCreditRows(items.chainCredits ?? [], reader);
  const unmatched = unmatchedRows(items.unmatched ?? []);
  const x402Payments = x402PaymentRows(items.x402Payments ?? [], reader);
  const x402Settlements = x402SettlementRows(items.x402Settlements ?? [], reader);
  const grants = grantRows(items.grants ?? [], reader);
  const locks = lockRows(items.payoutLocks);
  const feeBases = feeBasisRows(items.payoutFees ?? [], reader);
  const statements = statementRows(items.statements ?? [], reader);

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
    tabs: tabRows(items.tabs ?? []),
    tabUsages: tabUsageRows(items.tabUsages ?? []),
    statements,
    onChain: { topupCredits, chainCredits, unmatched },
    unreadable: reader.unreadable,
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
