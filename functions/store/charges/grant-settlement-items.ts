/**
 * The grant's part of a settlement (settlement-items.ts, and an x402 purchase's own ending,
 * purchase.repository.ts): what a hold's give-back lowers of the grant's `spent` and period
 * counters, and the check that the grant is still active when money goes to the agent. Apart from
 * the payer's give-back (settlement-release.ts) because a grant keeps its own counters, with their
 * own floor and their own basis.
 */
import { config } from '../../config';
import type { SpendCounted } from '../../core/charges';
import type { Minor } from '../../core/money';
import { readMinor } from '../numbers';
import { keys } from '../table';
import type { OldItem, TransactItem } from '../transact';
import { counterPeriod } from './grant-charge';

/** Which of the grant's period counters a give-back lowers (each only while it is still the charge's period and covers it). */
export interface GrantReturnBasis {
  /** Read only when the charge was counted in an hour counter (`counted.hour`). */
  hour: boolean;
  day: boolean;
  month: boolean;
}

/** Before the item is seen: the counters are the charge's and cover what goes back. */
export const assumeGrantCounted: GrantReturnBasis = { hour: true, day: true, month: true };

/** What to lower, as the grant item `old` shows its counters. */
export function grantReturnBasis(old: OldItem, counted: SpendCounted, returned: Minor): GrantReturnBasis {
  const covers = (counter: unknown, period: string) =>
    counterPeriod(counter) === period && readMinor(counter as Record<string, unknown>, 'v') >= returned;
  return {
    hour: counted.hour !== undefined && covers(old.spentHour, counted.hour),
    day: covers(old.spentDay, counted.day),
    month: covers(old.spentMonth, counted.month),
  };
}

/**
 * The grant item's part of a settlement: `returned` (a released, declined or expired hold, the
 * uncaptured rest of a capture) stops counting in `spent` and in the period counters that counted
 * it while they are still of the charge's periods (never below zero: the same floor as the payer's
 * counters, store/charges/payer.ts). `activeAt` (a capture, an approval: money goes to the agent): the
 * grant must be neither revoked nor past its `expiresAt` at that time (`grantInactiveError` tells
 * which). Undefined when there is nothing to write or check.
 */
export function grantSettleItem(
  grant: { userId: string; grantId: string },
  returned: Minor,
  counted: SpendCounted,
  basis: GrantReturnBasis,
  opts: { activeAt?: Date },
): TransactItem | undefined {
  const { activeAt } = opts;
  if (returned === 0 && activeAt === undefined) return undefined;
  const table = config().TABLE_NAME;
  const key = keys.grant(grant.userId, grant.grantId);
  const conditions = ['attribute_exists(PK)'];
  const values: Record<string, unknown> = {};
  // Nothing under a revoked or ended grant pays its agent (DESIGN §16, docs/grants.md), decided here, not by a read.
  if (activeAt !== undefined) {
    conditions.push('attribute_not_exists(revokedAt)', '(attribute_not_exists(expiresAt) OR expiresAt > :activeAt)');
    values[':activeAt'] = activeAt.toISOString();
  }
  if (returned === 0) {
    return {
      ConditionCheck: {
        TableName: table,
        Key: key,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeValues: values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  values[':neg'] = -returned;
  const add = ['spent :neg'];
  for (const [attr, name, period, lower] of [
    // The hour counter only where the charge was counted in one (a grant with an hourly limit).
    ...(counted.hour !== undefined ? [['spentHour', 'h', counted.hour, basis.hour] as const] : []),
    ['spentDay', 'd', counted.day, basis.day],
    ['spentMonth', 'm', counted.month, basis.month],
  ] as const) {
    values[`:${name}`] = period;
    values[':ret'] = returned;
    if (lower) {
      conditions.push(`${attr}.p = :${name} AND ${attr}.v >= :ret`);
      add.push(`${attr}.v :neg`);
    } else {
      // The exact complement: another period now, or a counter holding less than what goes back.
      conditions.push(`(attribute_not_exists(${attr}) OR ${attr}.p <> :${name} OR ${attr}.v < :ret)`);
    }
  }
  return {
    Update: {
      TableName: table,
      Key: key,
      UpdateExpression: `ADD ${add.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
