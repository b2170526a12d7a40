import { GSI1, GSI2 } from '../../functions/store/table';
import { familyOf, partitionSpread, setAssignments, sharedByAll, type TouchedItem, touchedBy } from './written';

const indexes = [GSI1, GSI2];

describe('what a write request touches, read from the request', () => {
  it('a transaction: every item by its table key, a ConditionCheck included, with the index partitions of a Put', () => {
    const touched = touchedBy(
      'TransactWriteItemsCommand',
      {
        TransactItems: [
          {
            Update: { Key: { PK: 'USER#u1', SK: 'USER' }, UpdateExpression: 'ADD #cur :neg', ExpressionAttributeNames: { '#cur': 'USD' } },
          },
          { Put: { Item: { PK: 'CHARGES#a1', SK: 'c1', GSI1PK: 'CHARGE#c1', GSI1SK: 'CHARGE', GSI2PK: 'USERCHARGES#u1', amount: 1 } } },
          { ConditionCheck: { Key: { PK: 'AGENTKEY#h', SK: 'AGENT' }, ConditionExpression: 'enabled = :t' } },
          { Delete: { Key: { PK: 'PENDINGCHARGE#c0', SK: 'PENDING' } } },
        ],
      },
      indexes,
    );
    expect(touched).toEqual([
      { op: 'Update', item: 'USER#u1|USER', partitions: ['table:USER#u1'] },
      { op: 'Put', item: 'CHARGES#a1|c1', partitions: ['table:CHARGES#a1', 'GSI1:CHARGE#c1', 'GSI2:USERCHARGES#u1'] },
      { op: 'ConditionCheck', item: 'AGENTKEY#h|AGENT', partitions: ['table:AGENTKEY#h'] },
      { op: 'Delete', item: 'PENDINGCHARGE#c0|PENDING', partitions: ['table:PENDINGCHARGE#c0'] },
    ]);
  });

  it('an Update lands in the index partition its SET clause assigns, by name or through #names and if_not_exists', () => {
    const [touched] = touchedBy(
      'UpdateItem',
      {
        Key: { PK: 'TOPUPS#u1', SK: 't1' },
        UpdateExpression: 'ADD n :one SET #g1 = if_not_exists(#g1, :pk), GSI1SK = :sk, note = list_append(note, :l) REMOVE x',
        ExpressionAttributeNames: { '#g1': 'GSI1PK' },
        ExpressionAttributeValues: { ':one': 1, ':pk': 'PENDINGTOPUPS', ':sk': '2026#t1', ':l': [] },
      },
      indexes,
    );
    expect(touched?.partitions).toEqual(['table:TOPUPS#u1', 'GSI1:PENDINGTOPUPS']);
  });

  it('reads the marshalled form too, and single writes and batches', () => {
    expect(touchedBy('PutItem', { Item: { PK: { S: 'IDEM#a' }, SK: { S: 'IDEM' }, GSI1PK: { S: 'X' } } }, indexes)).toEqual([
      { op: 'Put', item: 'IDEM#a|IDEM', partitions: ['table:IDEM#a', 'GSI1:X'] },
    ]);
    expect(
      touchedBy(
        'BatchWriteItem',
        { RequestItems: { t: [{ PutRequest: { Item: { PK: 'A#1', SK: 's' } } }, { DeleteRequest: { Key: { PK: 'B#2', SK: 's' } } }] } },
        indexes,
      ).map((t) => t.item),
    ).toEqual(['A#1|s', 'B#2|s']);
    expect(touchedBy('GetItem', { Key: { PK: 'A#1', SK: 's' } }, indexes)).toEqual([]);
  });

  it('takes the index declarations it is given, not a list of its own', () => {
    const [touched] = touchedBy('PutItem', { Item: { PK: 'A#1', SK: 's', GSI1PK: 'X', GSI9PK: 'Y' } }, [
      { indexName: 'GSI9', partitionKey: 'GSI9PK' },
    ]);
    expect(touched?.partitions).toEqual(['table:A#1', 'GSI9:Y']);
  });

  it('parses SET assignments between other clauses', () => {
    const set = setAssignments(
      'ADD #cur :amount, charges :one SET agentId = if_not_exists(agentId, :agentId), #type = :type',
      { '#type': 'type' },
      {
        ':agentId': 'a1',
        ':type': 'AgentBalanceShard',
        ':amount': 1,
        ':one': 1,
      },
    );
    expect(Object.fromEntries(set)).toEqual({ agentId: 'a1', type: 'AgentBalanceShard' });
  });
});

describe('the items all charges share', () => {
  it('intersects the key sets', () => {
    expect(sharedByAll([new Set(['a', 'b', 'c']), new Set(['c', 'b']), new Set(['b', 'c', 'd'])])).toEqual(['b', 'c']);
    expect(sharedByAll([new Set(['a']), new Set(['b'])])).toEqual([]);
    expect(sharedByAll([])).toEqual([]);
  });

  it('names a key by its family only', () => {
    expect(familyOf('AGENTKEY#abc')).toBe('AGENTKEY#');
    expect(familyOf('PENDING_EXPIRY')).toBe('PENDING_EXPIRY');
  });
});

describe('how charges spread their writes over partitions', () => {
  const charge = (i: number, shard: number): TouchedItem[] => [
    { op: 'Update', item: `USER#u${i}|USER`, partitions: [`table:USER#u${i}`] },
    { op: 'Update', item: `AGENTBAL#a#${shard}|BAL`, partitions: [`table:AGENTBAL#a#${shard}`] },
    { op: 'Put', item: `CHARGES#a|c${i}`, partitions: ['table:CHARGES#a', `GSI1:CHARGE#c${i}`] },
    { op: 'ConditionCheck', item: 'AGENTKEY#h|AGENT', partitions: ['table:AGENTKEY#h'] },
  ];

  it('counts the partitions more than one charge writes, and the largest share of all writes', () => {
    const spread = partitionSpread(Array.from({ length: 8 }, (_, i) => charge(i, i % 2)));
    // Shared: CHARGES#a, AGENTKEY#h, two shards. Single: 8 users, 8 by-id index entries.
    expect(spread).toEqual({
      charges: 8,
      writes: 40,
      partitions: 4,
      singleUse: 16,
      hottest: 'table:AGENTKEY#',
      maxShare: 8 / 40,
      hottestChargeShare: 1,
      hottestItem: 'AGENTKEY#|AGENT',
      hottestItemChargeShare: 1,
    });
  });

  it('a sharded partition takes its share of the writes', () => {
    const spread = partitionSpread(
      Array.from({ length: 16 }, (_, i) => [
        { op: 'Put' as const, item: `CHARGES#a#${i % 16}|c${i}`, partitions: [`table:CHARGES#a#${i % 16}`, `GSI1:CHARGE#c${i}`] },
        { op: 'Put' as const, item: `IDEM#${i}|IDEM`, partitions: [`table:IDEM#${i}`] },
      ]),
    );
    expect(spread.partitions).toBe(0);
    expect(spread.maxShare).toBeCloseTo(1 / 48);
    expect(spread.hottestChargeShare).toBeCloseTo(1 / 16);
    expect(spread.hottestItemChargeShare).toBeCloseTo(1 / 16);
  });

  it('no charges: nothing', () => {
    expect(partitionSpread([])).toEqual({
      charges: 0,
      writes: 0,
      partitions: 0,
      singleUse: 0,
      hottest: '',
      maxShare: 0,
      hottestChargeShare: 0,
      hottestItem: '',
      hottestItemChargeShare: 0,
    });
  });
});
