import type { SQSEvent } from 'aws-lambda';
import type { LocalSolana } from '../../bin/local/solana-rpc';
import { config } from '../../functions/config';
import type { Payout } from '../../functions/core/payouts';
import { createPayoutWorker } from '../../functions/payout-worker/worker';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { type DriveResult, drivePayout, type PayoutDeps, type PayoutStep } from '../../functions/use-cases/payouts/payouts';
import { createWithdrawal } from '../support/answers';
import { FakeRail, fakeRails } from '../support/fake-rail';
import { fundedAgent, lockOf, payoutIdOf, startTestChain, withdrawal } from '../support/payouts';
import { createTestTable } from '../support/table';

// The chain the withdraw use case checks USDC wallets' token accounts on (a fake rail pays here).
let chain: LocalSolana;
beforeAll(async () => {
  await createTestTable();
  chain = await startTestChain();
});
afterAll(async () => {
  await chain?.stop();
});

const noQueue = { enqueue: async () => undefined };

/** A clock past every lease taken now: what the next delivery after a crash sees. */
const afterLeaseExpiry = () => new Date(Date.now() + (config().PAYOUT_LEASE_SECONDS + 1) * 1000);

async function newPayout(currency: 'USD' | 'USDC' = 'USD', amount = '10.01'): Promise<{ agentId: string; payoutId: string }> {
  const agentId = await fundedAgent(currency, currency === 'USD' ? 100_00 : 100_000_000);
  const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { currency, amount }), noQueue));
  return { agentId, payoutId };
}

async function payout(ref: { agentId: string; payoutId: string }): Promise<Payout> {
  const found = await getPayout(ref.agentId, ref.payoutId);
  if (!found) throw new Error('payout vanished');
  return found;
}

describe('payout worker state machine', () => {
  it('pays a PENDING payout once: COMPLETED with processedAt, externalId and txHash, lock released', async () => {
    const rail = new FakeRail();
    const ref = await newPayout('USDC', '10');
    expect((await payout(ref)).status).toBe('PENDING');
    expect(await lockOf(ref.agentId)).toMatchObject({ payoutId: ref.payoutId });

    resetDynamoRequestCounts();
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('completed');
    // Claim, the agent read by id (a disabled agent's payout is held, not paid), checkpoint, and one
    // transaction for COMPLETED + lock release.
    expect(dynamoRequestCounts()).toEqual({ QueryCommand: 1, GetItemCommand: 1, UpdateItemCommand: 2, TransactWriteItemsCommand: 1 });

    const done = await payout(ref);
    expect(done).toMatchObject({ status: 'COMPLETED', attempts: 1, amount: 10_000_000, fee: 300_000, netAmount: 9_700_000 });
    expect(done.processedAt).toEqual(expect.any(String));
    const [transfer] = rail.paymentsFor(ref.payoutId);
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
    expect(transfer?.netAmount).toBe(9_700_000);
    expect(done.externalId).toBe(transfer?.ref);
    expect(done.txHash).toBe(`sig-${transfer?.ref}`);
    expect(await lockOf(ref.agentId)).toBeUndefined();
    expect((await readAgentLedger(ref.agentId)).balances.USDC).toBe(90_000_000);
  });

  it('keeps txHash empty for a PayPal payout', async () => {
    const rail = new FakeRail();
    const ref = await newPayout('USD');
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('completed');
    const done = await payout(ref);
    expect(done.txHash).toBeUndefined();
    expect(done.externalId).toEqual(expect.any(String));
    expect(rail.paymentsFor(ref.payoutId)[0]?.netAmount).toBe(971);
  });

  it('on a permanent refusal marks FAILED, refunds the gross amount and releases the lock in one step', async () => {
    const rail = new FakeRail();
    rail.mode = 'fail';
    const ref = await newPayout('USD', '10.01');
    expect((await readAgentLedger(ref.agentId)).balances.USD).toBe(100_00 - 10_01);

    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('failed');

    const failed = await payout(ref);
    expect(failed).toMatchObject({ status: 'FAILED', failureReason: 'receiver account is closed' });
    expect(failed.processedAt).toEqual(expect.any(String));
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(0);
    expect((await readAgentLedger(ref.agentId)).balances.USD).toBe(100_00);
    expect(await lockOf(ref.agentId)).toBeUndefined();
    // The lock is free: the next withdrawal is accepted.
    const next = await createWithdrawal(withdrawal(ref.agentId, { amount: '100' }), noQueue);
    expect(next.statusCode).toBe(200);
    expect((await readAgentLedger(ref.agentId)).balances.USD).toBe(0);
  });

  const crashPoints: PayoutStep[] = ['afterClaim', 'afterCheckpoint', 'afterRail'];
  it.each(crashPoints)('after a crash at %s, the redelivered message finishes the payout with exactly one payment', async (step) => {
    const rail = new FakeRail();
    const ref = await newPayout('USDC', '12.5');
    const crash: PayoutDeps = {
      railFor: fakeRails(rail),
      hooks: {
        [step]: () => {
          throw new Error(`crash ${step}`);
        },
      },
    };
    await expect(drivePayout(ref, crash)).rejects.toThrow(`crash ${step}`);
    expect((await payout(ref)).status).toBe('PROCESSING');

    // Redelivered before the crashed attempt's lease ran out: left alone (no second driver).
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('busy');
    // Redelivered after (SQS visibility timeout ≥ lease): this attempt finishes it.
    expect(await drivePayout(ref, { railFor: fakeRails(rail), clock: afterLeaseExpiry })).toBe('completed');

    const done = await payout(ref);
    expect(done.status).toBe('COMPLETED');
    expect(done.attempts).toBe(2);
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
    expect(rail.paymentsFor(ref.payoutId)[0]?.netAmount).toBe(12_125_000);
    expect(await lockOf(ref.agentId)).toBeUndefined();
  });

  it('after a crash right after the rail sent (answer lost), the retry finds the saved transfer and pays nothing more', async () => {
    const rail = new FakeRail();
    rail.crashAfterSend = true;
    const ref = await newPayout('USDC', '3');
    await expect(drivePayout(ref, { railFor: fakeRails(rail) })).rejects.toThrow('crash after send');
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
    expect((await payout(ref)).railState).toEqual({ rail: 'fake', ref: rail.paymentsFor(ref.payoutId)[0]?.ref });

    expect(await drivePayout(ref, { railFor: fakeRails(rail), clock: afterLeaseExpiry })).toBe('completed');
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
    expect((await payout(ref)).status).toBe('COMPLETED');
  });

  it('after a crash before the message was deleted, the redelivery is acknowledged without touching the rail', async () => {
    const rail = new FakeRail();
    const ref = await newPayout('USD');
    const crash: PayoutDeps = {
      railFor: fakeRails(rail),
      hooks: {
        afterFinalize: () => {
          throw new Error('crash before delete');
        },
      },
    };
    await expect(drivePayout(ref, crash)).rejects.toThrow('crash before delete');
    expect((await payout(ref)).status).toBe('COMPLETED');
    const calls = rail.calls;
    expect(await drivePayout(ref, { railFor: fakeRails(rail), clock: afterLeaseExpiry })).toBe('already-final');
    expect(rail.calls).toBe(calls);
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
  });

  it('leaves the payout PROCESSING on a transient rail error; a later attempt completes it', async () => {
    const rail = new FakeRail();
    rail.mode = 'unavailable';
    const ref = await newPayout('USD');
    await expect(drivePayout(ref, { railFor: fakeRails(rail) })).rejects.toThrow('fake rail unavailable');
    expect((await payout(ref)).status).toBe('PROCESSING');
    expect(await lockOf(ref.agentId)).toBeDefined();
    rail.mode = 'complete';
    expect(await drivePayout(ref, { railFor: fakeRails(rail), clock: afterLeaseExpiry })).toBe('completed');
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
  });

  it('keeps a not-yet-final payout PROCESSING with its externalId and lets the next check claim it at once', async () => {
    const rail = new FakeRail();
    rail.mode = 'pending';
    const ref = await newPayout('USD');
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('pending');
    const waiting = await payout(ref);
    expect(waiting.status).toBe('PROCESSING');
    expect(waiting.externalId).toBe(rail.paymentsFor(ref.payoutId)[0]?.ref);
    expect(waiting.processedAt).toBeUndefined();

    rail.mode = 'complete';
    // No lease to wait for: a "pending" answer releases it.
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('completed');
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
  });

  it('fences a stalled attempt: once another attempt took over, the stale one cannot save rail state or finish', async () => {
    const rail = new FakeRail();
    const ref = await newPayout('USDC', '5');
    let takeover: DriveResult | undefined;
    const stale: PayoutDeps = {
      railFor: fakeRails(rail),
      hooks: {
        // While this attempt stalls (its lease runs out), another attempt takes the payout and pays it.
        afterClaim: async () => {
          takeover = await drivePayout(ref, { railFor: fakeRails(rail), clock: afterLeaseExpiry });
        },
      },
    };
    expect(await drivePayout(ref, stale)).toBe('already-final');
    expect(takeover).toBe('completed');
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
    expect(rail.calls).toBe(2);
  });

  it('answers "missing" for a payout that does not exist', async () => {
    const rail = new FakeRail();
    expect(
      await drivePayout({ agentId: 'a00000000000000000000000000', payoutId: 'p00000000000000000000000000' }, { railFor: fakeRails(rail) }),
    ).toBe('missing');
    expect(rail.calls).toBe(0);
  });
});

describe('payout worker SQS batch handler', () => {
  const record = (messageId: string, body: string, receives = 1): SQSEvent['Records'][number] => ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: String(receives), SentTimestamp: '0', SenderId: 'local', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:payouts',
    awsRegion: 'us-east-1',
  });

  it('reports exactly the records that did not finish (poison, unknown payout, transient error)', async () => {
    const good = new FakeRail();
    const flaky = new FakeRail();
    flaky.mode = 'unavailable';
    const paid = await newPayout('USD');
    const stuck = await newPayout('USDC');
    const worker = createPayoutWorker({ railFor: (currency) => (currency === 'USD' ? good : flaky) });
    const result = await worker({
      Records: [
        record('m-paid', JSON.stringify(paid)),
        record('m-stuck', JSON.stringify(stuck), config().PAYOUT_MAX_RECEIVES),
        record('m-poison', '{"hello":"world"}'),
        record('m-unknown', JSON.stringify({ agentId: paid.agentId, payoutId: 'p00000000000000000000000000' })),
      ],
    });
    expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m-poison', 'm-stuck', 'm-unknown']);
    expect((await payout(paid)).status).toBe('COMPLETED');
    expect(good.paymentsFor(paid.payoutId)).toHaveLength(1);
    expect((await payout(stuck)).status).toBe('PROCESSING');

    // Delivered again once final: acknowledged, the rail is not asked again.
    const again = await worker({ Records: [record('m-again', JSON.stringify(paid), 2)] });
    expect(again.batchItemFailures).toEqual([]);
    expect(good.calls).toBe(1);
  });

  it('keeps the message of a payout another live attempt is driving, so it is looked at again later', async () => {
    const rail = new FakeRail();
    const ref = await newPayout('USD');
    const worker = createPayoutWorker({ railFor: fakeRails(rail) });
    let duplicate: Awaited<ReturnType<typeof worker>> | undefined;
    const holder: PayoutDeps = {
      railFor: fakeRails(rail),
      hooks: {
        afterClaim: async () => {
          duplicate = await worker({ Records: [record('m-dup', JSON.stringify(ref))] });
        },
      },
    };
    expect(await drivePayout(ref, holder)).toBe('completed');
    expect(duplicate?.batchItemFailures).toEqual([{ itemIdentifier: 'm-dup' }]);
    expect(rail.calls).toBe(1);
  });
});
