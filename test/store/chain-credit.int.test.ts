/**
 * The cross-rail credit-once guard against DynamoDB Local (store/topups/chain-credit.ts, docs/topups.md
 * "One transfer, one credit"): the two transactions that credit an on-chain transfer — a USDC
 * top-up's completion and x402's credit — racing for one signature, again and again. Exactly one
 * commits each time; the other is refused as credited elsewhere and writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import bs58 from 'bs58';
import { config } from '../../functions/config';
import { TransferCreditedElsewhereError } from '../../functions/core/chain-credits';
import { newTopupId, newUserId } from '../../functions/core/ids';
import type { UsdcTopup } from '../../functions/core/topups';
import { PaymentAlreadyCreditedError } from '../../functions/core/topups';
import { db } from '../../functions/store/client';
import { createUser } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import { createTopup } from '../../functions/store/topups/topup.repository';
import { completeTopup } from '../../functions/store/topups/topup-completion.repository';
import { claimSettlement, creditSettlement, getSettlement } from '../../functions/store/x402-facilitator/x402.repository';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const AMOUNT = 250_000;
const get = async (key: { PK: string; SK: string }) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }))).Item;

/** A payer with a PENDING USDC top-up, and an agent's PENDING x402 claim, both on one signature. */
async function bothRails(signature: string, messageHash: string) {
  const now = new Date();
  const userId = newUserId();
  await createUser(userId, `hash-${userId}`, now);
  const topup: UsdcTopup = {
    id: newTopupId(),
    userId,
    status: 'PENDING',
    currency: 'USDC',
    amount: AMOUNT,
    requestedAmount: AMOUNT,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    externalId: undefined,
    completedAt: undefined,
    holdsOpenSlot: true,
    address: bs58.encode(randomBytes(32)),
    reference: bs58.encode(randomBytes(32)),
    mint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    scannedThrough: undefined,
  };
  await createTopup(topup);
  const agentId = `a01${randomBytes(8).toString('hex')}`;
  const settlement = await claimSettlement(
    {
      messageHash,
      signature,
      agentId,
      amount: AMOUNT,
      payer: bs58.encode(randomBytes(32)),
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      resource: null,
    },
    now,
  );
  const topupCredit = () => completeTopup(topup, { rail: 'SOL', externalId: signature, amount: AMOUNT, currency: 'USDC' }, now);
  const x402Credit = () =>
    creditSettlement({
      settlement,
      record: {
        id: `x402_${randomBytes(8).toString('hex')}`,
        agentId,
        amount: AMOUNT,
        payer: settlement.payer,
        transaction: signature,
        network: settlement.network,
        resource: null,
        createdAt: now.toISOString(),
      },
      response: '{"success":true}',
      idempotency: { scope: `${agentId}#x402-settle`, key: signature, record: { fingerprint: 'f', statusCode: 200, body: '{}' } },
      events: [],
      now,
    });
  return { userId, agentId, topup, topupCredit, x402Credit };
}

describe('one transfer, two rails racing to credit it', () => {
  it('credits it exactly once, whichever wins; the loser is refused as credited elsewhere', async () => {
    const winners = { topup: 0, x402: 0 };
    for (let round = 0; round < 8; round++) {
      const signature = bs58.encode(randomBytes(64));
      const messageHash = randomBytes(32).toString('hex');
      const { userId, agentId, topup, topupCredit, x402Credit } = await bothRails(signature, messageHash);
      // Alternate which is sent first, so each gets its chance to win.
      const [a, b] = round % 2 === 0 ? [topupCredit(), x402Credit()] : [x402Credit(), topupCredit()];
      const [ra, rb] = await Promise.allSettled([a, b]);
      const results = round % 2 === 0 ? { topup: ra, x402: rb } : { topup: rb, x402: ra };
      const committed = Object.entries(results).filter(([, r]) => r.status === 'fulfilled');
      expect(committed).toHaveLength(1);
      const [[winner]] = committed as [[keyof typeof winners, PromiseSettledResult<void>]];
      winners[winner] += 1;
      const loser = Object.values(results).find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(loser.reason).toBeInstanceOf(TransferCreditedElsewhereError);

      expect(await get(keys.chainCredit(signature))).toMatchObject({ rail: winner, amount: AMOUNT });
      const user = await get(keys.user(userId));
      const topupItem = await get(keys.topup(userId, topup.id));
      const settlement = await getSettlement(messageHash);
      if (winner === 'topup') {
        expect([user?.USDC, topupItem?.status, settlement?.status]).toEqual([AMOUNT, 'COMPLETED', 'PENDING']);
      } else {
        expect([user?.USDC ?? 0, topupItem?.status, settlement?.status]).toEqual([0, 'PENDING', 'CREDITED']);
        expect(settlement?.agentId).toBe(agentId);
      }
      // Again, by the rail that won: its own guard answers (a replay), not the cross-rail one.
      if (winner === 'topup') await expect(topupCredit()).rejects.toBeInstanceOf(PaymentAlreadyCreditedError);
    }
    // DynamoDB Local serialises transactions, so the first sent tends to win: each rail won some.
    expect(winners.topup + winners.x402).toBe(8);
    expect(Math.min(winners.topup, winners.x402)).toBeGreaterThan(0);
  });
});
