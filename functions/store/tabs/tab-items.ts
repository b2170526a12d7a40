/**
 * The items of a tab (DESIGN §29), built in one place: what the opening adds to the hold's own
 * transaction (store/charges/charge-items.ts), what a use writes (its ONE transaction, two items of
 * the tab's own partition), and what every settlement of the tab's hold adds to its transaction
 * (store/charges/settlement-items.ts), so approval, decline, expiry and close move the tab with the
 * money and never apart from it.
 *
 * The tab item stays under 1 KB (no description: the hold's charge and the payer's entry carry it)
 * and in no index, so a use costs 2 + 2 write units: the tab item's conditional update and the use's
 * put, which is also the use's idempotency record.
 */
import { config } from '../../config';
import type { Charge } from '../../core/charges';
import { ChargeNotPendingError, StaleReadError } from '../../core/errors';
import type { PendingSettlementDecision } from '../../core/settlement-decision';
import type { Tab, TabCloser, TabUsage } from '../../core/tabs';
import { keys } from '../table';
import { named, type OldItem, outcome, PRECEDENCE, type TransactEntry, type TransactItem } from '../transact';

/** Attribute names of the tab item and its entries (`used`, `status` and `limit` are DynamoDB reserved words). */
const NAMES = { '#st': 'tabStatus', '#used': 'used', '#lim': 'tabLimit', '#cnt': 'usageCount', '#exp': 'expiresAt' };

/** The opening's items, in the hold's transaction: the tab, and its entries in the payer's and the agent's lists. */
export function tabOpenItems(tab: Tab, hold: Charge): TransactItem[] {
  const table = config().TABLE_NAME;
  const common = {
    tabId: tab.id,
    agentId: tab.agentId,
    userId: tab.userId,
    currency: tab.currency,
    tabLimit: tab.limit,
    tabStatus: tab.status,
    expiresAt: tab.expiresAt,
    createdAt: tab.createdAt,
    chargeId: tab.chargeId,
    ...(tab.grantId !== undefined ? { grantId: tab.grantId } : {}),
  };
  return [
    {
      Put: {
        TableName: table,
        Item: { ...keys.tab(tab.id), type: 'Tab', ...common, used: 0, usageCount: 0 },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.userTab(tab.userId, tab.id),
          type: 'TabEntry',
          ...common,
          description: hold.description,
          ...(hold.agentName !== undefined ? { agentName: hold.agentName } : {}),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.agentTab(tab.agentId, tab.id), type: 'TabEntry', tabId: tab.id, userId: tab.userId, tabStatus: tab.status },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ];
}

/** Why a use's transaction was refused: the use is there already (a replay), or the tab is not as this container knew it. */
export type UsageRefusal = { usage: OldItem } | { tab: OldItem | undefined };

/** What a use writes, as known to the container that writes it. */
export interface UsageWrite {
  usage: TabUsage;
  idempotencyKey: string;
  agentId: string;
  /** What the tab had used as this container knows it: the condition holds the tab to it exactly. */
  usedBefore: number;
  now: Date;
}

/**
 * A use's ONE transaction: the tab item, still OPEN, of this agent, not past `expiresAt`, with
 * exactly `usedBefore` used (so `usedAfter` is what it has after, with no read) and room for the
 * amount; and the use itself, new under its key. A refusal hands back the item that refused it.
 */
export function usageItems(write: UsageWrite): TransactEntry<UsageRefusal>[] {
  const { usage, idempotencyKey, agentId, usedBefore, now } = write;
  const table = config().TABLE_NAME;
  return [
    named<UsageRefusal>(
      {
        Update: {
          TableName: table,
          Key: keys.tab(usage.tabId),
          UpdateExpression: 'SET #used = :after ADD #cnt :one',
          // Not once a close has begun (`closingAt`, tab.repository.ts `freezeTab`): the close captures what it read.
          ConditionExpression:
            '#st = :open AND attribute_not_exists(closingAt) AND #used = :before AND #lim >= :after AND #exp > :now AND agentId = :agent',
          ExpressionAttributeNames: NAMES,
          ExpressionAttributeValues: {
            ':after': usage.usedAfter,
            ':before': usedBefore,
            ':one': 1,
            ':open': 'OPEN',
            ':now': now.toISOString(),
            ':agent': agentId,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      { onConditionFailed: (old) => outcome({ tab: old }) },
    ),
    named<UsageRefusal>(
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.tabUsage(usage.tabId, idempotencyKey),
            type: 'TabUsage',
            usageId: usage.usageId,
            amount: usage.amount,
            currency: usage.currency,
            description: usage.description,
            usedAfter: usage.usedAfter,
            tabLimit: usage.limit,
            createdAt: usage.createdAt,
            fingerprint: usage.fingerprint,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      // The first request's answer is the answer, whatever else failed.
      { onConditionFailed: (old) => (old ? outcome({ usage: old }) : undefined), precedence: PRECEDENCE.replay },
    ),
  ];
}

/** How a settlement of a tab's hold ends the tab (who closed it); absent: judged from the settlement. */
export interface TabSettlement {
  closedBy: TabCloser;
}

type Decision = Exclude<PendingSettlementDecision, { kind: 'refused' }>;

/**
 * The items a settlement of tab `tabId`'s hold adds to its transaction. An approval opens it until
 * the hold's new deadline; an ending closes it at what it used, which must be exactly what the
 * settlement captures (`paid`): a use that slipped in since the tab was read refuses the close
 * (StaleReadError: read it again), and a tab with uses is never released as if unused.
 */
export function tabSettlementItems(
  ids: { tabId: string; userId: string; agentId: string },
  decision: Decision,
  closedBy: TabCloser,
  now: Date,
): TransactEntry<never>[] {
  const table = config().TABLE_NAME;
  const { tabId, userId, agentId } = ids;
  if (decision.kind === 'advance') {
    const open = { ':open': 'OPEN', ':exp': decision.expiresAt };
    return [
      {
        Update: {
          TableName: table,
          Key: keys.tab(tabId),
          UpdateExpression: 'SET #st = :open, #exp = :exp',
          ConditionExpression: '#st = :waiting',
          ExpressionAttributeNames: { '#st': NAMES['#st'], '#exp': NAMES['#exp'] },
          ExpressionAttributeValues: { ...open, ':waiting': 'PENDING_APPROVAL' },
        },
      },
      entryUpdate(keys.userTab(userId, tabId), 'SET #st = :open, #exp = :exp', open, { '#exp': NAMES['#exp'] }),
      entryUpdate(keys.agentTab(agentId, tabId), 'SET #st = :open', { ':open': 'OPEN' }),
    ];
  }
  const closed = { ':closed': 'CLOSED', ':at': now.toISOString(), ':by': closedBy, ':used': decision.paid };
  return [
    named(
      {
        Update: {
          TableName: table,
          Key: keys.tab(tabId),
          UpdateExpression: 'SET #st = :closed, closedAt = :at, closedBy = :by',
          ConditionExpression: '#st <> :closed AND #used = :used',
          ExpressionAttributeNames: { '#st': NAMES['#st'], '#used': NAMES['#used'] },
          ExpressionAttributeValues: closed,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      {
        // After the charge's own condition (which speaks first): the tab moved on since it was read.
        onConditionFailed: (old) => (old?.tabStatus === 'CLOSED' ? new ChargeNotPendingError('FAILED') : new StaleReadError('tab used')),
        precedence: 1,
      },
    ),
    entryUpdate(keys.userTab(userId, tabId), 'SET #st = :closed, closedAt = :at, closedBy = :by, #used = :used', closed, {
      '#used': NAMES['#used'],
    }),
    entryUpdate(keys.agentTab(agentId, tabId), 'SET #st = :closed', { ':closed': 'CLOSED' }),
  ];
}

function entryUpdate(
  key: { PK: string; SK: string },
  expression: string,
  values: Record<string, unknown>,
  names: Record<string, string> = {},
): TransactItem {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: key,
      UpdateExpression: expression,
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#st': NAMES['#st'], ...names },
      ExpressionAttributeValues: values,
    },
  };
}
