/**
 * The throughput phase's raw baseline sends exactly the transaction the service sends for the
 * same charge (test/bench/throughput.ts `rawCharges`): the same items by operation and key
 * family, and the same write units as DynamoDB Local reports them. The ledger audit after all
 * covers the raw charges too.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { enabledAgent, fundedUser } from './context';
import { chargeEvent, invokeCounted } from './requests';
import { benchContextForTests } from './test-context';
import { rawCharges } from './throughput';
import { familyOf, type TouchedItem, touchedBy } from './written';

const ctx = benchContextForTests();

const shape = (items: TouchedItem[]) => items.map((t) => `${t.op} ${familyOf(t.item)}`).sort();

describe('the raw baseline', () => {
  it("sends the service's own transaction for a charge: the same items, the same write units", async () => {
    const agent = await enabledAgent(ctx());
    const user = await fundedUser(ctx(), { USD: '10' });
    const seed = await invokeCounted('create-charge', chargeEvent(agent, user, `raw-seed-${Date.now()}`, '0.01'));
    expect(seed.status).toBe(201);
    const service = await invokeCounted('create-charge', chargeEvent(agent, user, `raw-svc-${Date.now()}`, '0.01'));
    expect(service.status).toBe(201);

    const raw = rawCharges(ctx().stack.dynamoEndpoint);
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        region: 'us-east-1',
        endpoint: ctx().stack.dynamoEndpoint,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    try {
      const write = await raw.transactionOf(agent, user);
      expect(shape(touchedBy(write.command, write.input))).toEqual(shape(service.scope.touched));
      const sent = await client.send(
        new TransactWriteCommand({ ...(write.input as unknown as TransactWriteCommandInput), ReturnConsumedCapacity: 'TOTAL' }),
      );
      const units = (sent.ConsumedCapacity ?? []).reduce((a, c) => a + (c.CapacityUnits ?? 0), 0);
      expect(units).toBe(service.scope.writeUnits);
      // And as the throughput phase sends them, again and again.
      for (let i = 0; i < 5; i++) await raw.charge(agent, user);
    } finally {
      raw.close();
      client.destroy();
    }
  });
});
