/**
 * Reads everything the ledger audit needs: one paginated, strongly consistent Scan of the table,
 * sorted into the item kinds that hold money, then parsed into typed rows (`toLedgerRows`), so
 * the audit never sees a key or a raw attribute. This is an operator tool (bin/audit.ts) and a
 * test oracle, never a request path: a Scan reads the whole table, and it is not a snapshot, so
 * the figures only balance when no money moves while it runs.
 */
import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { db } from '../client';
import { type LedgerItems, type LedgerRows, toLedgerRows } from './ledger-rows.mapper';

export type { LedgerItems } from './ledger-rows.mapper';

/**
 * Only what the audit reads: large attributes (stored idempotency answers, rail state) stay on
 * the server, so each 1 MB page carries several times more items. (DynamoDB still bills a Scan
 * by the size of whole items; the saving is transfer and pages, not capacity.)
 */
const PROJECTION = {
  ProjectionExpression:
    'PK, SK, USD, USDC, heldUSD, heldUSDC, owedUSD, owedUSDC, amount, fee, accountCreationFee, netAmount, currency, #status, agentId, userId, payoutId, ' +
    'authorizedAmount, refundedAmount, operatorRefundedAmount, owedRepaid, debited, owed, signature, paymentId, #transaction, ' +
    'grantId, spent, spentHour, spentDay, spentMonth, #counted, createdAt, feeCounted, withdrawn, feesPaid, ' +
    // The payer's statement (docs/statement.md): who has every movement's entry, and the entries.
    'statementFrom, ' +
    // What the wallet reconciliation (functions/audit/wallet-checks.ts) matches transfers with.
    'topupId, #rail, #mint, #reason, externalId, txHash, railState.signature, ' +
    // An x402 purchase (DESIGN §22): paid out by the hot wallet, by this transaction once captured.
    '#purchase.#transaction, #purchase.requirements.payTo, ' +
    // An x402 payment's refunds (DESIGN §28): its counter, and each refund's mark.
    'refunded, ' +
    // Tabs (DESIGN §29): the tab item's limit, use and status, tied to its hold (functions/audit/tab-checks.ts).
    'tabId, chargeId, tabLimit, #used, usageCount, tabStatus',
  ExpressionAttributeNames: {
    '#status': 'status',
    '#used': 'used',
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
  // Refunds of x402 payments are payouts in a partition of their own (store/x402-refunds).
  ['X402REFUND#', undefined, 'payouts'],
  ['PAYOUTLOCK#', 'LOCK', 'payoutLocks'],
  ['PAYOUTLOCK#', 'FEES', 'payoutFees'],
  ['REVERSALS#', undefined, 'reversals'],
  ['X402PAY#', undefined, 'x402Payments'],
  ['X402TX#', 'SETTLEMENT', 'x402Settlements'],
  ['GRANTS#', undefined, 'grants'],
  ['TOPUPCREDIT#', 'CREDIT', 'topupCredits'],
  ['CHAINCREDIT#', 'CREDIT', 'chainCredits'],
  ['UNMATCHED#', 'UNMATCHED', 'unmatched'],
  ['TAB#', 'TAB', 'tabs'],
  ['TAB#', undefined, 'tabUsages'],
  ['STMT#', undefined, 'statements'],
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
    tabs: [],
    tabUsages: [],
    statements: [],
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
