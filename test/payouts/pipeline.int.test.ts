/**
 * The payout pipeline against local SQS and DynamoDB Local: the real send after commit, the
 * Lambda-style consumer with partial batch failures, the redrive to the DLQ after
 * PAYOUT_MAX_RECEIVES receives, and the reconciler picking up what SQS gave up on or never got.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type LocalSqs, type PayoutConsumer, startLocalSqs, startPayoutConsumer } from '../../bin/local/payout-pipeline';
import type { LocalSolana } from '../../bin/local/solana-rpc';
import { resetForTests } from '../../functions/config';
import { HOT_WALLET_LAMPORTS_METRIC } from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';
import { createPayoutWorker } from '../../functions/payout-worker/worker';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { reconcilePayouts } from '../../functions/use-cases/payouts/payouts';
import { createWithdrawal } from '../support/answers';
import { eventually } from '../support/eventually';
import { FakeRail, fakeRails } from '../support/fake-rail';
import { fundedAgent, payoutIdOf, startTestChain, withdrawal } from '../support/payouts';
import { createTestTable } from '../support/table';

const MAX_RECEIVES = 2;
let sqs: LocalSqs;
let client: SQSClient;
const rail = new FakeRail();
let consumer: PayoutConsumer;
/** Where the withdraw use case checks USDC wallets' token accounts (a fake rail pays). */
let chain: LocalSolana;

beforeAll(async () => {
  await createTestTable();
  chain = await startTestChain();
  sqs = await startLocalSqs({ visibilityTimeoutSeconds: 2, maxReceives: MAX_RECEIVES });
  Object.assign(process.env, {
    ...sqs.env,
    PAYOUT_MAX_RECEIVES: String(MAX_RECEIVES),
    // Shorter than the visibility timeout: a redelivered message finds a failed attempt's lease
    // run out (see docs/payouts.md).
    PAYOUT_LEASE_SECONDS: '1',
    RECONCILE_PENDING_AFTER_SECONDS: '120',
    RECONCILE_PROCESSING_AFTER_SECONDS: '300',
  });
  resetForTests();
  client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  consumer = startPayoutConsumer({
    sqs,
    worker: createPayoutWorker({ railFor: fakeRails(rail) }),
    // Driven by hand below, with a clock of the test's choosing.
    reconcile: async () => undefined,
    reconcileIntervalMs: 60_000,
  });
});

afterAll(async () => {
  await consumer?.stop();
  client?.destroy();
  resetForTests();
  await sqs?.stop();
  await chain?.stop();
});

async function statusOf(agentId: string, payoutId: string) {
  return (await getPayout(agentId, payoutId))?.status;
}

async function queueDepth(url: string): Promise<number> {
  const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

const minutesLater = (minutes: number) => () => new Date(Date.now() + minutes * 60_000);

describe('payout pipeline on local SQS', () => {
  it('sends the committed payout to the queue; the worker pays it and the message is deleted', async () => {
    rail.mode = 'complete';
    const agentId = await fundedAgent('USD', 20_00);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '20' })));
    await eventually('COMPLETED', async () => (await statusOf(agentId, payoutId)) === 'COMPLETED');
    expect(rail.paymentsFor(payoutId)).toHaveLength(1);
    await eventually('an empty queue', async () => (await queueDepth(sqs.queueUrl)) === 0);
  });

  it(`moves a message that fails ${MAX_RECEIVES} times to the DLQ; the payout stays PROCESSING and the reconciler finishes it`, async () => {
    rail.mode = 'unavailable';
    const callsBefore = rail.calls;
    const agentId = await fundedAgent('USDC', 5_000_000);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { currency: 'USDC', amount: '5' })));

    const dead = await eventually(
      'the message in the DLQ',
      async () =>
        (await client.send(new ReceiveMessageCommand({ QueueUrl: sqs.dlqUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }))).Messages?.[0],
    );
    expect(JSON.parse(dead.Body ?? '')).toEqual({ payoutId, agentId });
    expect(rail.calls - callsBefore).toBe(MAX_RECEIVES);
    expect(await queueDepth(sqs.queueUrl)).toBe(0);
    expect(await getPayout(agentId, payoutId)).toMatchObject({ status: 'PROCESSING', attempts: MAX_RECEIVES });

    rail.mode = 'complete';
    const report = await reconcilePayouts({ railFor: fakeRails(rail), clock: minutesLater(6) });
    expect(report.driven.completed).toBeGreaterThanOrEqual(1);
    expect(await statusOf(agentId, payoutId)).toBe('COMPLETED');
    expect(rail.paymentsFor(payoutId)).toHaveLength(1);
  });

  it('re-sends a payout whose message never reached the queue, once per RECONCILE_PENDING_AFTER_SECONDS', async () => {
    rail.mode = 'complete';
    const agentId = await fundedAgent('USD', 3_00);
    const lost = {
      enqueue: async () => {
        throw new Error('SQS unreachable');
      },
    };
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '3' }), lost));
    expect(await statusOf(agentId, payoutId)).toBe('PENDING');

    // Too fresh: left alone.
    expect((await reconcilePayouts({ railFor: fakeRails(rail) })).resent).toBe(0);
    // Stale: sent again, through the real queue, and paid by the worker.
    const clock = minutesLater(3);
    expect((await reconcilePayouts({ railFor: fakeRails(rail), clock })).resent).toBe(1);
    // Its clock restarted: the next run does not send it again.
    expect((await reconcilePayouts({ railFor: fakeRails(rail), clock })).resent).toBe(0);
    await eventually('COMPLETED', async () => (await statusOf(agentId, payoutId)) === 'COMPLETED');
    expect(rail.paymentsFor(payoutId)).toHaveLength(1);
  });

  it('leaves fresh PROCESSING payouts to the worker and drives stale ones, one code path', async () => {
    rail.mode = 'pending';
    const agentId = await fundedAgent('USD', 4_00);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '4' })));
    await eventually('an attempt that left it waiting', async () => (await getPayout(agentId, payoutId))?.externalId !== undefined);
    expect(await statusOf(agentId, payoutId)).toBe('PROCESSING');

    // Still not final when the reconciler looks: counted as stuck (the StuckPayouts metric).
    const stillWaiting = await reconcilePayouts({ railFor: fakeRails(rail), clock: minutesLater(6) });
    expect(stillWaiting).toMatchObject({ driven: { pending: 1 }, stuck: 1 });

    rail.mode = 'complete';
    expect((await reconcilePayouts({ railFor: fakeRails(rail) })).driven.completed).toBe(0);
    expect(await statusOf(agentId, payoutId)).toBe('PROCESSING');
    const later = await reconcilePayouts({ railFor: fakeRails(rail), clock: minutesLater(12) });
    expect(later).toMatchObject({ driven: { completed: 1 }, stuck: 0 });
    expect(await statusOf(agentId, payoutId)).toBe('COMPLETED');
    expect(rail.paymentsFor(payoutId)).toHaveLength(1);
  });

  it('starts no payout when its Lambda has too little time left, and reports those payouts as stuck', async () => {
    rail.mode = 'pending';
    const agentId = await fundedAgent('USD', 2_00);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '2' })));
    await eventually('an attempt that left it waiting', async () => (await getPayout(agentId, payoutId))?.externalId !== undefined);
    rail.mode = 'complete';
    const calls = rail.calls;
    const reconciler = createReconciler({ railFor: fakeRails(rail), clock: minutesLater(30) });
    const hurried = await reconciler(undefined, { getRemainingTimeInMillis: () => 5_000 });
    expect(hurried.stuck).toBe(1);
    expect(rail.calls).toBe(calls);
    const unhurried = await reconciler(undefined, { getRemainingTimeInMillis: () => 300_000 });
    expect(unhurried).toMatchObject({ driven: { completed: 1 }, stuck: 0 });
    expect(await statusOf(agentId, payoutId)).toBe('COMPLETED');
  });

  it("reports the hot wallet's SOL on every run with x402 off (it pays every USDC payout's fee), and carries on when it cannot read it", async () => {
    const recorded = jest.spyOn(metrics(), 'addMetric');
    try {
      // No x402 facilitator: the reading does not depend on it (HotWalletSolLow, lib/monitoring.ts).
      await createReconciler({ railFor: fakeRails(rail), hotWalletLamports: async () => 42_000_000 })();
      const readings = () => recorded.mock.calls.filter(([name]) => name === HOT_WALLET_LAMPORTS_METRIC).map(([, , value]) => value);
      expect(readings()).toEqual([42_000_000]);
      const report = await createReconciler({
        railFor: fakeRails(rail),
        hotWalletLamports: () => Promise.reject(new Error('rpc down')),
      })();
      expect(report.stuck).toBe(0);
      expect(readings()).toEqual([42_000_000]);
    } finally {
      recorded.mockRestore();
    }
  });
});
