/**
 * What the ledger audit's top-up check reads (functions/audit/topup-checks.ts): every top-up, every
 * credit record written by a top-up, every credit-once guard, and every payer's open-top-up
 * counter. One strongly consistent scan, kept apart from store/audit.repository.ts so the top-up
 * check stays self-contained.
 */
import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';

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
  /** TOPUPCREDIT# guards: the signature / capture id and the top-up it credited. */
  guards: { key: string; topupId: string; amount: number }[];
  /** OPENTOPUPS# counters: how many PENDING top-ups each payer has, as the cap counts them. */
  openCounters: { userId: string; open: number }[];
}

export async function scanTopupRows(): Promise<TopupAuditRows> {
  const rows: TopupAuditRows = { topups: [], credits: [], guards: [], openCounters: [] };
  let start: Record<string, unknown> | undefined;
  do {
    const out: ScanCommandOutput = await db().send(
      new ScanCommand({
        TableName: config().TABLE_NAME,
        ConsistentRead: true,
        FilterExpression:
          'begins_with(PK, :t) OR begins_with(PK, :g) OR begins_with(PK, :o) OR (begins_with(PK, :c) AND attribute_exists(topupId))',
        ExpressionAttributeValues: { ':t': 'TOPUPS#', ':g': 'TOPUPCREDIT#', ':o': 'OPENTOPUPS#', ':c': 'CREDITS#' },
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
        rows.guards.push({ key: pk, topupId: String(item.topupId), amount: Number(item.amount) });
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
