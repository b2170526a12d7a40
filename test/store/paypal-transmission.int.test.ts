import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { claimTransmission, releaseTransmission } from '../../functions/store/topups/paypal-transmission.repository';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const stored = async (id: string) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.paypalTransmission(id), ConsistentRead: true }))).Item;

describe('PayPal transmissions against DynamoDB Local', () => {
  it('claims a transmission once; a replay of a claim that was kept is refused', async () => {
    const id = `tx-${Date.now()}-kept`;
    expect(await claimTransmission(id, new Date())).toBe(true);
    expect(await claimTransmission(id, new Date())).toBe(false);
    expect(await stored(id)).toMatchObject({ type: 'PaypalTransmission' });
  });

  it('releases a claim by marking it, not deleting it, and the next delivery claims it again, once', async () => {
    const id = `tx-${Date.now()}-released`;
    expect(await claimTransmission(id, new Date())).toBe(true);
    await releaseTransmission(id);
    // Still there (the webhook function holds no DeleteItem), marked released, with its TTL.
    expect(await stored(id)).toMatchObject({ released: true, ttl: expect.any(Number) });
    const [first, second] = await Promise.all([claimTransmission(id, new Date()), claimTransmission(id, new Date())]);
    expect([first, second].sort()).toEqual([false, true]);
    expect((await stored(id))?.released).toBeUndefined();
  });

  it('releasing a claim that is gone (TTL) writes nothing', async () => {
    const id = `tx-${Date.now()}-gone`;
    await releaseTransmission(id);
    expect(await stored(id)).toBeUndefined();
  });
});
