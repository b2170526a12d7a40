/**
 * Reads everything the ledger audit needs: one paginated, strongly consistent Scan of the table,
 * sorted into the item kinds that hold money, then parsed into typed rows (`toLedgerRows`), so
 * the audit never sees a key or a raw attribute. This is an operator tool (bin/audit.ts) and a
 * test oracle, never a request path: a Scan reads the whole table, and it is not a snapshot, so
 * the figures only balance when no money moves while it runs.
 */
import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';

type Item = Record<string, unknown>;

import { type LedgerRows, toLedgerRows } from './ledger-rows.mapper';

/**
 * The money-holding items of the table, by kind (raw attributes, as stored). Tests that tamper
 * with stored items use these keys; the audit reads `LedgerRows`.
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
 * Only what the audit reads: large attributes (stored idempotency answers, rail state) stay on
 * the server, so each 1 MB page carries several times more items. (DynamoDB still bills a Scan
 * by the size of whole items; the saving is transfer and pages, not capacity.)
 */
const PROJECTION = {
  ProjectionExpression:
    'PK, SK, USD, USDC, heldUSD, heldUSDC, owedUSD, owedUSDC, amount, fee, accountCreationFee, netAmount, currency, #status, agentId, userId, payoutId, ' +
    'authorizedAmount, refundedAmount, owedRepaid, debited, owed, signature, paymentId, #transaction, ' +
    'grantId, spent, spentDay, spentMonth, #counted, createdAt, feeCounted, withdrawn, feesPaid, ' +
    // What the wallet reconciliation (functions/audit/wallet-checks.ts) matches transfers with.
    'topupId, #rail, #mint, #reason, externalId, txHash, railState.signature, ' +
    // An x402 purchase (DESIGN §22): paid out by the hot wallet, by this transaction once captured.
    '#purchase.#transaction, #purchase.requirements.payTo',
  ExpressionAttributeNames: {
    '#status': 'status',
    '#transaction': 'transaction',
    '#counted': 'counted',
    '#rail': 'rail',
    '#mint': 'mint',
    '#reason': 'reason',
    '#purchase': 'purchase',
  },
};

/** Partition-key prefixes (see functions/store/table.ts) → the bucket they belong in. */
const KINDS: ReadonlyArray<readonly [prefix: string, sk: string | undefined, bucket: Exclude<keyof LedgerItems, 'scanned' | 'pages'>]> = [
  ['USER#', 'USER', 'users'],
  ['AGENTBAL#', 'BAL', 'agentShards'],
  ['CREDITS#', undefined, 'credits'],
  ['CHARGES#', undefined, 'charges'],
  ['PAYOUTS#', undefined, 'payouts'],
  ['PAYOUTLOCK#', 'LOCK', 'payoutLocks'],
  ['PAYOUTLOCK#', 'FEES', 'payoutFees'],
  ['REVERSALS#', undefined, 'reversals'],
  ['X402PAY#', undefined, 'x402Payments'],
  ['X402TX#', 'SETTLEMENT', 'x402Settlements'],
  ['GRANTS#', undefined, 'grants'],
  ['TOPUPCREDIT#', 'CREDIT', 'topupCredits'],
  ['CHAINCREDIT#', 'CREDIT', 'chainCredits'],
  ['UNMATCHED#', 'UNMATCHED', 'unmatched'],
];

/**
 * Scans the whole table (strongly consistent pages of up to `pageSize` items) and returns the
 * money-holding items by kind. `segments` > 1 runs a parallel scan (large tables).
 */
export async function scanLedgerItems(opts: { pageSize?: number; segments?: number } = {}): Promise<LedgerItems> {
  const table = config().TABLE_NAME;
  const segments = Math.max(1, opts.segments ?? 1);
  const result: Required<LedgerItems> = {
    users: [],
    agentShards: [],
    credits: [],
    charges: [],
    payouts: [],
    payoutLocks: [],
    payoutFees: [],
    reversals: [],
    x402Payments: [],
    x402Settlements: [],
    grants: [],
    topupCredits: [],
    chainCredits: [],
    unmatched: [],
    scanned: 0,
    pages: 0,
  };

  const scanSegment = async (segment: number): Promise<void> => {
    let start: Record<string, unknown> | undefined;
    do {
      const out: ScanCommandOutput = await db().send(
        new ScanCommand({
          TableName: table,
          ConsistentRead: true,
          ...PROJECTION,
          ...(opts.pageSize ? { Limit: opts.pageSize } : {}),
          ...(segments > 1 ? { Segment: segment, TotalSegments: segments } : {}),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      result.pages += 1;
      for (const item of out.Items ?? []) {
        result.scanned += 1;
        const pk = String(item.PK ?? '');
        const sk = String(item.SK ?? '');
        for (const [prefix, wantSk, bucket] of KINDS) {
          if (pk.startsWith(prefix) && (wantSk === undefined || sk === wantSk)) {
            result[bucket].push(item);
            break;
          }
        }
      }
      start = out.LastEvaluatedKey;
    } while (start);
  };

  await Promise.all(Array.from({ length: segments }, (_, i) => scanSegment(i)));
  return result;
}

/** `scanLedgerItems`, parsed into typed rows: what the ledger audit reads. */
export async function scanLedgerRows(opts: { pageSize?: number; segments?: number } = {}): Promise<LedgerRows> {
  return toLedgerRows(await scanLedgerItems(opts));
}
