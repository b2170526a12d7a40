import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { SettlementClaimedError } from '../../functions/core/x402';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { claimSettlement, getSettlement } from '../../functions/store/x402-facilitator/x402.repository';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const payment = (messageHash: string, agentId = 'a01agent') => ({
  messageHash,
  signature: `sig-of-${messageHash}`,
  agentId,
  amount: 10_000,
  payer: 'Buyer1111111111111111111111111111111111111',
  network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  resource: null,
  feeLamports: 10_001,
});
const stored = async (messageHash: string) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402Settlement(messageHash), ConsistentRead: true }))).Item;

describe('x402 settlement claims against DynamoDB Local', () => {
  it('one of two racing claims on a payment wins, keyed by its message hash; the other is told whose it is', async () => {
    const messageHash = `hash-${Date.now()}-race`;
    const results = await Promise.allSettled([
      claimSettlement(payment(messageHash), new Date()),
      claimSettlement(payment(messageHash, 'a01b'), new Date()),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(SettlementClaimedError);
    const winner = await getSettlement(messageHash);
    expect(winner).toMatchObject({ status: 'PENDING', messageHash, signature: `sig-of-${messageHash}`, feeLamports: 10_001 });
    expect((lost.reason as SettlementClaimedError).existing).toEqual(winner);
    expect(await stored(messageHash)).toMatchObject({ status: 'PENDING', GSI1PK: 'X402PENDING' });
  });

  it('a claim stays the guard: a second claim is refused, by the same agent too', async () => {
    const messageHash = `hash-${Date.now()}-kept`;
    await claimSettlement(payment(messageHash), new Date());
    await expect(claimSettlement(payment(messageHash, 'a01b'), new Date())).rejects.toBeInstanceOf(SettlementClaimedError);
    await expect(claimSettlement(payment(messageHash), new Date())).rejects.toBeInstanceOf(SettlementClaimedError);
  });

  it('reads a claim keyed by its signature (written before claims were keyed by message hash) under that key', async () => {
    const signature = `legacy-${Date.now()}`;
    const { messageHash: _, ...legacy } = payment(signature);
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: {
          ...keys.x402Settlement(signature),
          type: 'X402Settlement',
          ...legacy,
          signature,
          status: 'PENDING',
          createdAt: new Date().toISOString(),
        },
      }),
    );
    expect(await getSettlement(signature)).toMatchObject({ messageHash: signature, signature, status: 'PENDING' });
  });
});
