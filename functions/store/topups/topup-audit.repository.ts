/**
 * What the ledger audit's top-up check reads (functions/audit/topup-checks.ts): every top-up, every
 * credit record written by a top-up, every credit-once guard, every payer's open-top-up counter,
 * and every reversal with its once-per-refund guard. One strongly consistent scan, kept apart from store/audit/audit.repository.ts so the top-up
 * check stays self-contained.
 */
import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { db } from '../client';

export interface TopupAuditRows {
  topups: {
    userId: string;
    topupId: string;
    status: string;
    amount: number | undefined;
    currency: string;
    externalId: string | undefined;
    /** Whether it holds (while PENDING) one of its payer's open-top-up slots. */
    holdsOpenSlot: boolean;
  }[];
  /** CREDITS# records that carry a topupId. */
  credits: { userId: string; topupId: string; amount: number; currency: string }[];
  /** TOPUPCREDIT# guards: the signature / capture id, the top-up it credited, and how much reversals took back. */
  guards: { key: string; topupId: string; amount: number; reversed?: number }[];
  /** REVERSALS# records (money PayPal took back) and TOPUPREVERSAL# guards (once per refund id). */
  reversals?: { refundId: string; captureId: string; topupId: string; amount: number }[];
  reversalGuards?: { refundId: string; captureId: string }[];
  /** OPENTOPUPS# counters: how many PENDING top-ups each payer has, as the cap counts them. */
  openCounters: { userId: string; open: number }[];
}

export async function scanTopupRows(): Promise<TopupAuditRows> {
  const rows: Required<TopupAuditRows> = { topups: [], credits: [], guards: [], openCounters: [], reversals: [], reversalGuards: [] };
  let start: Record<string, unknown> | undefined;
  do {
    const out: ScanCommandOutput = await db().send(
      new ScanCommand({
        TableName: config().TABLE_NAME,
        ConsistentRead: true,
        FilterExpression:
          'begins_with(PK, :t) OR begins_with(PK, :g) OR begins_with(PK, :o) OR begins_with(PK, :r) OR begins_with(PK, :rg) OR ' +
          '(begins_with(PK, :c) AND attribute_exists(topupId))',
        ExpressionAttributeValues: {
          ':t': 'TOPUPS#',
          ':g': 'TOPUPCREDIT#',
          ':o': 'OPENTOPUPS#',
          ':r': 'REVERSALS#',
          ':rg': 'TOPUPREVERSAL#',
          ':c': 'CREDITS#',
        },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) {
      const pk = String(item.PK);
      if (pk.startsWith('TOPUPS#')) {
        rows.topups.push({
          userId: String(item.userId),
          topupId: String(item.id),
          status: String(item.status),
          amount: typeof item.amount === 'number' ? item.amount : undefined,
          currency: String(item.currency),
          externalId: item.externalId === undefined ? undefined : String(item.externalId),
          holdsOpenSlot: item.holdsOpenSlot === true,
        });
      } else if (pk.startsWith('OPENTOPUPS#')) {
        rows.openCounters.push({ userId: pk.slice('OPENTOPUPS#'.length), open: Number(item.open) });
      } else if (pk.startsWith('TOPUPCREDIT#')) {
        rows.guards.push({
          key: pk,
          topupId: String(item.topupId),
          amount: Number(item.amount),
          ...(item.reversed === undefined ? {} : { reversed: Number(item.reversed) }),
        });
      } else if (pk.startsWith('TOPUPREVERSAL#')) {
        rows.reversalGuards.push({ refundId: String(item.refundId), captureId: String(item.captureId) });
      } else if (pk.startsWith('REVERSALS#')) {
        rows.reversals.push({
          refundId: String(item.refundId),
          captureId: String(item.captureId),
          topupId: String(item.topupId),
          amount: Number(item.amount),
        });
      } else {
        rows.credits.push({
          userId: String(item.userId),
          topupId: String(item.topupId),
          amount: Number(item.amount),
          currency: String(item.currency),
        });
      }
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return rows;
}
