/**
 * Reads of the payer's statement (docs/statement.md): a strongly consistent Query of the payer's
 * entries, newest first, from a position, down to a lower bound (the `from` date's first ULID). A
 * page makes at most two of these after the balance's one GetItem (use-cases/identity/statement.ts):
 * the page budget of DESIGN §26.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import { config } from '../../config';
import type { StatementEntry } from '../../core/statement';
import { db } from '../client';
import { keys, PARTITIONS } from '../table';
import { toStatementEntry } from './statement-items';

/** One Query's rows and whether the partition has more below them. */
export interface StatementRows {
  entries: StatementEntry[];
  /** The last key read when the Query stopped before the end of the range (its Limit or its 1 MB). */
  more: boolean;
}

/**
 * Up to `limit` entries of `userId`, newest first, older than `before` (an entry id, exclusive)
 * when given, and not older than `since` (an ISO instant) when given.
 */
export async function statementRows(userId: string, opts: { limit: number; before?: string; since?: string }): Promise<StatementRows> {
  const pk = `${PARTITIONS.statement}${userId}`;
  const lower = opts.since ? firstIdAt(opts.since) : undefined;
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: lower !== undefined ? 'PK = :pk AND SK >= :lower' : 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk, ...(lower !== undefined ? { ':lower': lower } : {}) },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: opts.limit,
      ...(opts.before ? { ExclusiveStartKey: keys.statement(userId, opts.before) } : {}),
    }),
  );
  return { entries: (out.Items ?? []).map(toStatementEntry), more: out.LastEvaluatedKey !== undefined };
}

/** The smallest lower-case ULID of the millisecond `iso` names: every entry made at or after it sorts after it. */
const firstIdAt = (iso: string): string => `${encodeTime(Math.max(0, Date.parse(iso)), 10)}${'0'.repeat(16)}`.toLowerCase();
