/**
 * The grant charge's Update (store/charges/grant-charge.ts) against DynamoDB Local, on a real grant item:
 * exact under concurrency, and refused once the grant is revoked, expired or another agent's.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { newGrant } from '../../functions/core/grants';
import { newGrantId, newUserId } from '../../functions/core/ids';
import { type GrantChargeBasis, grantChargeUpdate } from '../../functions/store/charges/grant-charge-items';
import { db } from '../../functions/store/client';
import { createGrant, getGrant } from '../../functions/store/identity/grant.repository';
import { createUser } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

async function grantOf(limits: Record<string, number>, ttlSeconds?: number) {
  const now = new Date();
  const grant = newGrant(
    { id: newGrantId(), userId: newUserId(), agentId: 'a1', agentName: 'bot' },
    { currency: 'USD', limits, ...(ttlSeconds ? { ttlSeconds } : {}) },
    now,
  );
  // A grant is made under its payer's account key (store/identity/grant.repository.ts createGrant).
  await createUser(grant.userId, `account-${grant.id}`, now);
  await createGrant(grant, `hash-${grant.id}`, { accountKeyHash: `account-${grant.id}`, events: [], now });
  return grant;
}

const charge = (userId: string, grantId: string, agentId: string, amount: number, basis: GrantChargeBasis, now = new Date()) =>
  db()
    .send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.grant(userId, grantId),
        ...grantChargeUpdate(agentId, 'USD', amount, basis, now),
      }),
    )
    .then(
      () => 'ok',
      (error: Error) => error.name,
    );

describe('a grant charge’s condition on the grant item', () => {
  it('lets exactly 10 of 20 concurrent 1.00 charges through under total 10.00', async () => {
    const grant = await grantOf({ total: 1000 });
    // The first charge opens the period's counters; the rest add to them.
    const basis = { agentId: 'a1', currency: 'USD' as const, limits: grant.limits };
    expect(await charge(grant.userId, grant.id, 'a1', 100, basis)).toBe('ok');
    const periods = await getGrant(grant.userId, grant.id);
    const warm = { ...basis, day: periods?.spentDay?.p, month: periods?.spentMonth?.p } as GrantChargeBasis;
    const results = await Promise.all(Array.from({ length: 20 }, () => charge(grant.userId, grant.id, 'a1', 100, warm)));
    expect(results.filter((r) => r === 'ok')).toHaveLength(9);
    expect(results.filter((r) => r === 'ConditionalCheckFailedException')).toHaveLength(11);
    expect((await getGrant(grant.userId, grant.id))?.spent).toBe(1000);
  });

  it('holds the daily limit, and refuses another agent, a revoked grant and an expired one', async () => {
    const grant = await grantOf({ daily: 300, perCharge: 200 }, 3600);
    const basis = { agentId: 'a1', currency: 'USD' as const, limits: grant.limits };
    expect(await charge(grant.userId, grant.id, 'a1', 200, basis)).toBe('ok');
    const warm = { ...basis, day: (await getGrant(grant.userId, grant.id))?.spentDay?.p, month: new Date().toISOString().slice(0, 7) };
    expect(await charge(grant.userId, grant.id, 'a1', 150, warm)).toBe('ConditionalCheckFailedException');
    expect(await charge(grant.userId, grant.id, 'a1', 100, warm)).toBe('ok');
    const other = await grantOf({ perCharge: 200 });
    const otherBasis = { agentId: 'a1', currency: 'USD' as const, limits: other.limits };
    expect(await charge(other.userId, other.id, 'a2', 1, otherBasis)).toBe('ConditionalCheckFailedException');
    expect(await charge(other.userId, other.id, 'a1', 201, otherBasis)).toBe('ConditionalCheckFailedException');
    // Past expiresAt.
    expect(await charge(grant.userId, grant.id, 'a1', 1, warm, new Date(Date.now() + 3_601_000))).toBe('ConditionalCheckFailedException');
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.grant(other.userId, other.id),
        UpdateExpression: 'SET revokedAt = :at',
        ExpressionAttributeValues: { ':at': new Date().toISOString() },
      }),
    );
    expect(await charge(other.userId, other.id, 'a1', 1, otherBasis)).toBe('ConditionalCheckFailedException');
  });
});
