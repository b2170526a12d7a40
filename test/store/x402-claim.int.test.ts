import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { SettlementClaimedError } from '../../functions/core/x402';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { claimSettlement, getSettlement, releaseClaim } from '../../functions/store/x402.repository';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const payment = (signature: string, agentId = 'a01agent') => ({
  signature,
  agentId,
  amount: 10_000,
  payer: 'Buyer1111111111111111111111111111111111111',
  network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  resource: null,
});
const stored = async (signature: string) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402Settlement(signature), ConsistentRead: true }))).Item;

describe('x402 settlement claims against DynamoDB Local', () => {
  it('a released claim is a tombstone (RELEASED, out of the work list, TTL set), reads as absent and is claimed again once', async () => {
    const signature = `sig-${Date.now()}-released`;
    await claimSettlement(payment(signature), new Date());
    expect(await stored(signature)).toMatchObject({ status: 'PENDING', GSI1PK: expect.any(String) });
    // Only the claiming agent's PENDING claim is released.
    expect(await releaseClaim(signature, 'a01other')).toBe(false);
    expect(await releaseClaim(signature, 'a01agent')).toBe(true);
    const tombstone = await stored(signature);
    expect(tombstone).toMatchObject({ status: 'RELEASED', ttl: expect.any(Number) });
    expect(tombstone?.GSI1PK).toBeUndefined();
    expect(await getSettlement(signature)).toBeUndefined();
    expect(await releaseClaim(signature, 'a01agent')).toBe(false);
    // The buyer tries again: one of two racing claims wins, the other is told whose it is.
    const results = await Promise.allSettled([
      claimSettlement(payment(signature), new Date()),
      claimSettlement(payment(signature, 'a01b'), new Date()),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(SettlementClaimedError);
    expect((await getSettlement(signature))?.status).toBe('PENDING');
  });

  it('a claim that was not released stays the guard: a second claim is refused', async () => {
    const signature = `sig-${Date.now()}-kept`;
    await claimSettlement(payment(signature), new Date());
    await expect(claimSettlement(payment(signature, 'a01b'), new Date())).rejects.toBeInstanceOf(SettlementClaimedError);
  });
});
