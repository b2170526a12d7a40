/**
 * Charges. A successful charge is ONE TransactWriteItems of five items:
 *   0. the user's balance debited (condition: enough funds),
 *   1. one shard of the agent's earned balance credited (and its charge count bumped),
 *   2. the charge written,
 *   3. the idempotency record written,
 *   4. the kill switch: a condition that the agent item is still enabled for this key.
 * A charge refused for funds keeps a FAILED record, written with its idempotency record.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import type { Charge, ChargeStatus } from '../core/charges';
import { AgentDisabledError, BalanceLimitError, InsufficientFundsError } from '../core/errors';
import type { IdempotencyWrite } from '../core/idempotency';
import type { Currency } from '../core/money';
import { agentCheckFailed, agentEnabledCheck } from './agent.repository';
import { randomShard, shardCredit } from './balance.repository';
import { db } from './client';
import { idempotencyPut, recordExists } from './idempotency.repository';
import { GSI1, keys } from './table';
import { ConditionFailedError, transactWrite } from './transact';

const USER_DEBIT = 0;
const AGENT_SHARD = 1;
const SUCCESS_IDEMPOTENCY = 3;
const SUCCESS_AGENT_CHECK = 4;
const FAILED_IDEMPOTENCY = 2;
const FAILED_AGENT_CHECK = 3;

/**
 * Commits a SUCCESS charge, conditioned on the agent item of `agentKeyHash` being enabled. Throws,
 * in this order of precedence: IdempotencyRecordExistsError (a replay wins: the first request's
 * answer is the answer), AgentDisabledError, InsufficientFundsError, or BalanceLimitError when the
 * agent's shard is at its cap.
 */
export async function commitCharge(charge: Charge, agentKeyHash: string, idem: IdempotencyWrite, now: Date): Promise<void> {
  const table = config().TABLE_NAME;
  try {
    await transactWrite([
      {
        Update: {
          TableName: table,
          Key: keys.user(charge.userId),
          UpdateExpression: 'ADD #cur :neg',
          // Enough funds in the charge's own currency; a missing attribute means zero.
          ConditionExpression: 'attribute_exists(PK) AND #cur >= :amount',
          ExpressionAttributeNames: { '#cur': charge.currency },
          ExpressionAttributeValues: { ':neg': -charge.amount, ':amount': charge.amount },
        },
      },
      shardCredit(charge.agentId, randomShard(), charge.currency, charge.amount, true),
      chargePut(charge),
      idempotencyPut(idem, now),
      agentEnabledCheck(agentKeyHash),
    ]);
  } catch (error) {
    const exists = recordExists(error, SUCCESS_IDEMPOTENCY, now);
    if (exists) throw exists;
    if (agentCheckFailed(error, SUCCESS_AGENT_CHECK)) throw new AgentDisabledError();
    if (error instanceof ConditionFailedError && error.failed.includes(USER_DEBIT)) throw new InsufficientFundsError();
    if (error instanceof ConditionFailedError && error.failed.includes(AGENT_SHARD)) throw new BalanceLimitError();
    throw error;
  }
}

/**
 * Keeps a FAILED charge (funds refused) with its idempotency record; moves no money. The shard
 * write only counts the charge, so the list's `total` includes refused charges.
 */
export async function recordFailedCharge(charge: Charge, agentKeyHash: string, idem: IdempotencyWrite, now: Date): Promise<void> {
  try {
    await transactWrite([
      shardCredit(charge.agentId, randomShard(), charge.currency, 0, true),
      chargePut(charge),
      idempotencyPut(idem, now),
      agentEnabledCheck(agentKeyHash),
    ]);
  } catch (error) {
    const exists = recordExists(error, FAILED_IDEMPOTENCY, now);
    if (exists) throw exists;
    if (agentCheckFailed(error, FAILED_AGENT_CHECK)) throw new AgentDisabledError();
    throw error;
  }
}

function chargePut(charge: Charge) {
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: { ...keys.charge(charge.agentId, charge.id), ...keys.chargeIndex(charge.id), type: 'Charge', ...charge },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

/** One agent's charge; undefined for an unknown id or another agent's charge. */
export async function getCharge(agentId: string, chargeId: string): Promise<Charge | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.charge(agentId, chargeId), ConsistentRead: true }),
  );
  return out.Item ? toCharge(out.Item) : undefined;
}

/** Any agent's charge by id (admin reads), through GSI1. */
export async function getChargeById(chargeId: string): Promise<Charge | undefined> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.chargeIndex(chargeId).GSI1PK },
      Limit: 1,
    }),
  );
  const item = out.Items?.[0];
  return item ? toCharge(item) : undefined;
}

export interface ChargePage {
  charges: Charge[];
  /** Id of the last charge returned when more may follow. */
  lastId: string | undefined;
}

/**
 * A page of an agent's charges, newest first. `after` continues from a cursor (one query).
 * Otherwise `skip` charges are passed over with keys-only queries, so a deep page reads only
 * keys of what it skips, never whole items.
 */
export async function listCharges(agentId: string, opts: { limit: number; skip: number; after?: string }): Promise<ChargePage> {
  const table = config().TABLE_NAME;
  const pk = keys.chargePartition(agentId);
  let start: Record<string, unknown> | undefined = opts.after ? { PK: pk, SK: opts.after } : undefined;
  let toSkip = opts.after ? 0 : opts.skip;
  while (toSkip > 0) {
    const out = await db().send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ProjectionExpression: 'PK, SK',
        ScanIndexForward: false,
        Limit: toSkip,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    toSkip -= out.Items?.length ?? 0;
    // No LastEvaluatedKey: the partition ended inside (or exactly at the end of) the skip.
    if (!out.LastEvaluatedKey) return { charges: [], lastId: undefined };
    start = out.LastEvaluatedKey;
  }
  const out = await db().send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: opts.limit,
      ...(start ? { ExclusiveStartKey: start } : {}),
    }),
  );
  const charges = (out.Items ?? []).map(toCharge);
  const last = charges[charges.length - 1];
  return { charges, lastId: out.LastEvaluatedKey && last ? last.id : undefined };
}

export function toCharge(item: Record<string, unknown>): Charge {
  return {
    id: String(item.id),
    agentId: String(item.agentId),
    userId: String(item.userId),
    idempotencyKey: String(item.idempotencyKey),
    amount: Number(item.amount),
    currency: item.currency as Currency,
    description: String(item.description ?? ''),
    status: item.status as ChargeStatus,
    createdAt: String(item.createdAt),
  };
}
