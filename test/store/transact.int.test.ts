/**
 * The transaction helper against DynamoDB Local: a cancelled transaction comes out as the meaning
 * its failed item was built with, whatever the item's position; conflicts and throttling (injected
 * at the client: DynamoDB Local serialises transactions and never throttles) are still told apart.
 * `conditionalWrite`, its single-item sibling, sends one PutItem/UpdateItem/DeleteItem (not a
 * transaction) and reads a failed condition the same way.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { ConcurrencyError, ServiceBusyError } from '../../functions/core/errors';
import { db } from '../../functions/store/client';
import {
  ConditionFailedError,
  conditionalWrite,
  type NamedItem,
  named,
  outcome,
  PRECEDENCE,
  type TransactItem,
  transactWrite,
} from '../../functions/store/transact';
import { injectFault } from '../support/faults';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

class TakenError extends Error {}
class OtherError extends Error {}

let n = 0;
const key = (label: string) => ({ PK: `TXTEST#${label}-${++n}`, SK: 'ITEM' });

/** A Put that fails when the item exists. */
const putNew = (k: { PK: string; SK: string }, extra: Record<string, unknown> = {}): TransactItem => ({
  Put: {
    TableName: config().TABLE_NAME,
    Item: { ...k, ...extra },
    ConditionExpression: 'attribute_not_exists(PK)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

async function existing(label: string, attributes: Record<string, unknown> = {}) {
  const k = key(label);
  await db().send(new PutCommand({ TableName: config().TABLE_NAME, Item: { ...k, ...attributes } }));
  return k;
}

const exists = async (k: { PK: string; SK: string }) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: k, ConsistentRead: true }))).Item !== undefined;

describe('transactWrite', () => {
  it('commits and says so', async () => {
    const k = key('fresh');
    await expect(transactWrite([putNew(k)])).resolves.toEqual({ committed: true });
    expect(await exists(k)).toBe(true);
  });

  it('turns a cancelled transaction into the failed item’s named error, with the item as it was', async () => {
    const taken = await existing('taken', { owner: 'first' });
    const fresh = key('fresh');
    let seen: unknown;
    const attempt = transactWrite([
      putNew(fresh),
      named(putNew(taken), {
        onConditionFailed: (old) => {
          seen = old?.owner;
          return new TakenError();
        },
      }),
    ]);
    await expect(attempt).rejects.toBeInstanceOf(TakenError);
    expect(seen).toBe('first');
    expect(await exists(fresh)).toBe(false);
  });

  it('returns an outcome a failed item stands for instead of throwing', async () => {
    const taken = await existing('outcome');
    const result = await transactWrite([named(putNew(taken), { onConditionFailed: () => outcome('already there') })]);
    expect(result).toEqual({ committed: false, outcome: 'already there' });
  });

  it('means the same whatever is added in front of the item, failing or not', async () => {
    const taken = await existing('front');
    const meaning: NamedItem = named(putNew(taken), { onConditionFailed: () => new TakenError(), precedence: 1 });
    await expect(transactWrite([meaning])).rejects.toBeInstanceOf(TakenError);
    // A new item in front that commits fine.
    await expect(transactWrite([putNew(key('front-ok')), meaning])).rejects.toBeInstanceOf(TakenError);
    // A new item in front that fails too, with a meaning of lower precedence.
    const alsoTaken = await existing('front-fails');
    const lower = named(putNew(alsoTaken), { onConditionFailed: () => new OtherError() });
    await expect(transactWrite([lower, meaning])).rejects.toBeInstanceOf(TakenError);
    await expect(transactWrite([meaning, lower])).rejects.toBeInstanceOf(TakenError);
  });

  it('lets a replay speak first, then the kill switch, then the rest', async () => {
    const [a, b, c] = [await existing('p1'), await existing('p2'), await existing('p3')];
    class ReplayError extends Error {}
    class DisabledError extends Error {}
    const items = [
      named(putNew(a), { onConditionFailed: () => new OtherError(), precedence: 3 }),
      named(putNew(b), { onConditionFailed: () => new DisabledError(), precedence: PRECEDENCE.killSwitch }),
      named(putNew(c), { onConditionFailed: () => new ReplayError(), precedence: PRECEDENCE.replay }),
    ];
    await expect(transactWrite(items)).rejects.toBeInstanceOf(ReplayError);
    await expect(transactWrite(items.slice(0, 2))).rejects.toBeInstanceOf(DisabledError);
  });

  it('passes to the next failed item when a meaning has nothing to say', async () => {
    const [a, b] = [await existing('silent'), await existing('speaks')];
    const items = [
      named(putNew(a), { onConditionFailed: () => undefined, precedence: 5 }),
      named(putNew(b), { onConditionFailed: () => new TakenError() }),
    ];
    await expect(transactWrite(items)).rejects.toBeInstanceOf(TakenError);
  });

  it('names an unnamed failure by operation and key family only, never the whole key', async () => {
    const taken = await existing('secret-id');
    const error = await transactWrite([putNew(taken)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionFailedError);
    expect((error as Error).message).toBe('transaction condition failed on Put TXTEST#');
  });

  it('retries a conflict and commits; a condition failing alongside a conflict is still a refusal', async () => {
    const k = key('conflict');
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 2);
    try {
      await expect(transactWrite([putNew(k)])).resolves.toEqual({ committed: true });
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(2);

    // DynamoDB reports every item's reason: a failed condition wins over a conflict on another item.
    const name = 'mixed-reasons';
    let calls = 0;
    db().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && calls++ === 0) {
          throw new TransactionCanceledException({
            message: 'Transaction cancelled [TransactionConflict, ConditionalCheckFailed]',
            $metadata: {},
            CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'ConditionalCheckFailed', Item: { owner: { S: 'x' } } }],
          });
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    let old: unknown;
    try {
      const attempt = transactWrite([
        putNew(key('mixed-a')),
        named(putNew(key('mixed-b')), {
          onConditionFailed: (item) => {
            old = item?.owner;
            return new TakenError();
          },
        }),
      ]);
      await expect(attempt).rejects.toBeInstanceOf(TakenError);
    } finally {
      db().middlewareStack.remove(name);
    }
    expect(calls).toBe(1);
    expect(old).toBe('x');
  });

  it('gives up on endless conflicts with ConcurrencyError and on endless throttling with ServiceBusyError', async () => {
    const conflict = injectFault('TransactWriteItemsCommand', 'conflict', 1000);
    try {
      await expect(transactWrite([putNew(key('conflict-forever'))])).rejects.toBeInstanceOf(ConcurrencyError);
    } finally {
      conflict.remove();
    }
    expect(conflict.hits()).toBe(config().TRANSACTION_MAX_ATTEMPTS);

    const throttle = injectFault('TransactWriteItemsCommand', 'throttle', 1000);
    try {
      await expect(transactWrite([putNew(key('throttled'))])).rejects.toBeInstanceOf(ServiceBusyError);
    } finally {
      throttle.remove();
    }
    expect(throttle.hits()).toBe(config().TRANSACTION_MAX_ATTEMPTS);
  });
});

describe('conditionalWrite', () => {
  const put = (k: { PK: string; SK: string }, extra: Record<string, unknown> = {}) => {
    const item = putNew(k, extra);
    if (!item.Put) throw new Error('a Put');
    return { Put: item.Put };
  };

  it('sends one single-item request, commits, and returns what ReturnValues asked for', async () => {
    const k = await existing('update', { count: 1 });
    const sent: string[] = [];
    const name = 'conditional-write-spy';
    db().middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      const result = await conditionalWrite(
        {
          Update: {
            TableName: config().TABLE_NAME,
            Key: k,
            UpdateExpression: 'ADD #count :one',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: { ':one': 1 },
            ReturnValues: 'UPDATED_NEW',
          },
        },
        () => new OtherError(),
      );
      expect(result).toEqual({ committed: true, attributes: { count: 2 } });
      await expect(conditionalWrite(put(key('fresh-single')), () => new OtherError())).resolves.toEqual({ committed: true });
    } finally {
      db().middlewareStack.remove(name);
    }
    expect(sent).toEqual(['UpdateItemCommand', 'PutItemCommand']);
  });

  it('turns a failed condition into its error or outcome, given the item as it was', async () => {
    const taken = await existing('single-taken', { owner: 'first' });
    let seen: unknown;
    await expect(
      conditionalWrite(put(taken), (old) => {
        seen = old?.owner;
        return new TakenError();
      }),
    ).rejects.toBeInstanceOf(TakenError);
    expect(seen).toBe('first');
    await expect(conditionalWrite(put(taken), (old) => outcome(old?.owner))).resolves.toEqual({ committed: false, outcome: 'first' });
  });

  it('names a failure whose meaning has nothing to say, and throws what the client throws otherwise (throttling: ServiceBusyError)', async () => {
    const taken = await existing('single-unnamed');
    const unnamed = conditionalWrite(put(taken), () => undefined);
    await expect(unnamed).rejects.toBeInstanceOf(ConditionFailedError);
    await expect(unnamed).rejects.toThrow('transaction condition failed on Put TXTEST#');
    const throttle = injectFault('PutItemCommand', 'throttle', 1);
    try {
      await expect(conditionalWrite(put(key('single-throttled')), () => new OtherError())).rejects.toBeInstanceOf(ServiceBusyError);
    } finally {
      throttle.remove();
    }
    expect(throttle.hits()).toBe(1);
  });
});
