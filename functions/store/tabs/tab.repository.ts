/**
 * Tabs' reads and a use's write (DESIGN §29). The opening's items ride in the hold's transaction
 * and the close's in the settlement's (tab-items.ts); what is here is a use's one transaction and
 * the reads: the tab (strongly consistent), one use by its key, a tab's uses, a payer's tabs, an
 * agent's open tabs.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { Currency } from '../../core/money';
import type { Tab, TabCloser, TabStatus, TabUsage } from '../../core/tabs';
import { batchGetConsistent } from '../batch-get';
import { db } from '../client';
import { readMinor } from '../numbers';
import { keys } from '../table';
import { conditionalWrite, outcome, transactWrite } from '../transact';
import { type UsageRefusal, type UsageWrite, usageItems } from './tab-items';

/** The tab item, strongly consistent; undefined when there is none. */
export async function getTab(tabId: string): Promise<Tab | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.tab(tabId), ConsistentRead: true }));
  return out.Item ? toTab(out.Item) : undefined;
}

/**
 * A close begins (use-cases/tabs/close.ts): the tab item marked `closingAt`, after which no use
 * commits (its condition, tab-items.ts `usageItems`), so the `used` answered here is what the close
 * captures and no stream of uses can outrun it. Answers the tab as it is now; undefined when it is
 * gone or already CLOSED (read it again).
 */
export async function freezeTab(tabId: string, now: Date): Promise<Tab | undefined> {
  const result = await conditionalWrite<'closed'>(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.tab(tabId),
        UpdateExpression: 'SET closingAt = if_not_exists(closingAt, :now)',
        ConditionExpression: 'attribute_exists(PK) AND tabStatus <> :closed',
        ExpressionAttributeValues: { ':now': now.toISOString(), ':closed': 'CLOSED' },
        ReturnValues: 'ALL_NEW',
      },
    },
    () => outcome('closed' as const),
  );
  return result.committed && result.attributes ? toTab(result.attributes) : undefined;
}

/** A use's one transaction: committed, or the item that refused it (a replay's use, or the tab as it is). */
export async function commitUsage(write: UsageWrite): Promise<{ committed: true } | { committed: false; refusal: UsageRefusal }> {
  const result = await transactWrite<UsageRefusal>(usageItems(write));
  return result.committed ? { committed: true } : { committed: false, refusal: result.outcome };
}

/** The use made under `idempotencyKey`, if any (strongly consistent). */
export async function getUsage(tabId: string, idempotencyKey: string): Promise<TabUsage | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.tabUsage(tabId, idempotencyKey), ConsistentRead: true }),
  );
  return out.Item ? toUsage(out.Item) : undefined;
}

/** A page of a tab's uses, in the order of their keys (each carries its time-ordered `usageId`). */
export async function listUsage(
  tabId: string,
  opts: { limit: number; after?: string },
): Promise<{ usages: TabUsage[]; lastKey: string | undefined }> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :u)',
      ExpressionAttributeValues: { ':pk': keys.tabPartition(tabId), ':u': 'U#' },
      Limit: opts.limit,
      ...(opts.after !== undefined ? { ExclusiveStartKey: keys.tabUsage(tabId, opts.after) } : {}),
    }),
  );
  const items = out.Items ?? [];
  const last = out.LastEvaluatedKey?.SK;
  return { usages: items.map(toUsage), lastKey: typeof last === 'string' ? last.slice(2) : undefined };
}

/** A page of a payer's tabs, newest first (of one status, when given), each as its tab item says now. */
export async function listUserTabs(
  userId: string,
  opts: { limit: number; after?: string; status?: TabStatus },
): Promise<{ tabs: (Tab & { description: string; agentName?: string })[]; lastId: string | undefined }> {
  const table = config().TABLE_NAME;
  const entries: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined = opts.after !== undefined ? keys.userTab(userId, opts.after) : undefined;
  let lastId: string | undefined;
  // A status filter may leave a read page short: read on until the page is full or the list ends.
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.userTabPartition(userId), ...(opts.status ? { ':st': opts.status } : {}) },
        ...(opts.status ? { FilterExpression: 'tabStatus = :st' } : {}),
        ScanIndexForward: false,
        Limit: opts.limit - entries.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    entries.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
    lastId = typeof start?.SK === 'string' ? start.SK : undefined;
  } while (start && entries.length < opts.limit);
  // What is used moves on the tab item alone: one BatchGetItem for the page.
  const wanted = entries.map((e) => keys.tab(String(e.tabId)));
  const live = new Map((wanted.length > 0 ? await batchGetConsistent(wanted) : []).map((item) => [String(item.tabId), item]));
  const tabs = entries.map((entry) => {
    const tab = toTab(live.get(String(entry.tabId)) ?? entry);
    return {
      ...tab,
      description: String(entry.description ?? ''),
      ...(typeof entry.agentName === 'string' ? { agentName: entry.agentName } : {}),
    };
  });
  return { tabs, lastId: entries.length >= opts.limit ? lastId : undefined };
}

/** The ids of an agent's tabs not yet CLOSED (what its kill switch closes). */
export async function listAgentOpenTabIds(agentId: string): Promise<string[]> {
  const ids: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        KeyConditionExpression: 'PK = :pk',
        FilterExpression: 'tabStatus <> :closed',
        ExpressionAttributeValues: { ':pk': keys.agentTabPartition(agentId), ':closed': 'CLOSED' },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    ids.push(...(out.Items ?? []).map((item) => String(item.tabId)));
    start = out.LastEvaluatedKey;
  } while (start);
  return ids;
}

/**
 * The ids of a payer's tabs not yet CLOSED, of one agent (what a block closes), of one grant (what
 * its revocation closes), or all of them (what a rotation of the account key closes). Strongly
 * consistent: what closes them must not miss one opened just before the credential ended.
 */
export async function listUserOpenTabIds(userId: string, only: { agentId?: string; grantId?: string } = {}): Promise<string[]> {
  const ids: string[] = [];
  const filters = ['tabStatus <> :closed'];
  const values: Record<string, unknown> = { ':pk': keys.userTabPartition(userId), ':closed': 'CLOSED' };
  if (only.agentId !== undefined) {
    filters.push('agentId = :agent');
    values[':agent'] = only.agentId;
  }
  if (only.grantId !== undefined) {
    filters.push('grantId = :grant');
    values[':grant'] = only.grantId;
  }
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        KeyConditionExpression: 'PK = :pk',
        FilterExpression: filters.join(' AND '),
        ExpressionAttributeValues: values,
        // A tab opened just before the credential ended must be found: its entry was written in the opening's transaction.
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    ids.push(...(out.Items ?? []).map((item) => String(item.tabId)));
    start = out.LastEvaluatedKey;
  } while (start);
  return ids;
}

export function toTab(item: Record<string, unknown>): Tab {
  return {
    id: String(item.tabId),
    agentId: String(item.agentId),
    userId: String(item.userId),
    currency: item.currency as Currency,
    limit: readMinor(item, 'tabLimit'),
    used: readMinor(item, 'used'),
    usageCount: readMinor(item, 'usageCount'),
    status: item.tabStatus as TabStatus,
    chargeId: String(item.chargeId),
    ...(typeof item.grantId === 'string' ? { grantId: item.grantId } : {}),
    expiresAt: String(item.expiresAt),
    createdAt: String(item.createdAt),
    ...(typeof item.closedAt === 'string' ? { closedAt: item.closedAt } : {}),
    ...(typeof item.closedBy === 'string' ? { closedBy: item.closedBy as TabCloser } : {}),
  };
}

export function toUsage(item: Record<string, unknown>): TabUsage {
  const pk = String(item.PK);
  return {
    tabId: pk.slice(keys.tabPartition('').length),
    usageId: String(item.usageId),
    amount: readMinor(item, 'amount'),
    currency: item.currency as Currency,
    description: String(item.description ?? ''),
    usedAfter: readMinor(item, 'usedAfter'),
    limit: readMinor(item, 'tabLimit'),
    createdAt: String(item.createdAt),
    fingerprint: String(item.fingerprint),
  };
}
