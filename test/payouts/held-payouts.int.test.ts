/**
 * Held payouts (docs/payouts.md, "Held payouts") on DynamoDB Local with the test rail: the worker
 * holds a disabled agent's payout before the rail is asked anything; the operator lists it,
 * releases it (paid although the agent stays disabled, unless the agent's flag changed since the
 * release) or cancels it (its gross, fee included, back to the agent in one transaction with its
 * idempotency record); the reconciler leaves held payouts alone; cancels race each other and a
 * release, and exactly one of them wins.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { db } from '../../functions/store/client';
import { setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { listPayoutsByStatus } from '../../functions/store/payouts/payout-hold.repository';
import { keys } from '../../functions/store/table';
import { drivePayout, reconcilePayouts } from '../../functions/use-cases/payouts/payouts';
import { cancelPayout, createWithdrawal, releasePayout } from '../support/answers';
import { FakeRail, fakeRails } from '../support/fake-rail';
import { fundedAgent, lockOf, payoutIdOf, withdrawal } from '../support/payouts';
import { createTestTable } from '../support/table';

beforeAll(async () => {
  await createTestTable();
});

const noQueue = { enqueue: async () => undefined };
const minutesLater = (m: number) => () => new Date(Date.now() + m * 60_000);

/** A disabled agent with a PENDING USD payout of 10.01 (made while it was enabled) out of 20. */
async function disabledWithPayout(): Promise<{ agentId: string; payoutId: string }> {
  const agentId = await fundedAgent('USD', 20_00);
  const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '10.01' }), noQueue));
  await setAgentEnabled(agentId, false);
  return { agentId, payoutId };
}

async function heldPayout(rail = new FakeRail()): Promise<{ agentId: string; payoutId: string }> {
  const ref = await disabledWithPayout();
  expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('held');
  return ref;
}

const balance = async (agentId: string) => (await readAgentLedger(agentId)).balances.USD;
const feeBasis = async (agentId: string) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.payoutFees(agentId, 'USD'), ConsistentRead: true }))).Item;
const body = (result: { rawBody?: string; body?: unknown }) =>
  (result.rawBody ? JSON.parse(result.rawBody) : result.body) as Record<string, unknown>;

describe('the worker holds a disabled agent’s payout', () => {
  it('before the rail is asked anything: HELD, the money still debited, the lock kept, listed for the operator', async () => {
    const rail = new FakeRail();
    const ref = await heldPayout(rail);
    expect(rail.calls).toBe(0);
    const held = await getPayout(ref.agentId, ref.payoutId);
    expect(held).toMatchObject({ status: 'HELD', holdReason: 'agent disabled', heldAt: expect.any(String) });
    expect(await balance(ref.agentId)).toBe(20_00 - 10_01);
    expect(await lockOf(ref.agentId)).toMatchObject({ payoutId: ref.payoutId });
    const listed = await listPayoutsByStatus('HELD', { limit: 100 });
    expect(listed.payouts.map((p) => p.id)).toContain(ref.payoutId);
    // A duplicate message, a later attempt: still held, the rail never asked.
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('held');
    expect(rail.calls).toBe(0);
  });

  it('and the reconciler leaves it to the operator: not driven, not counted stuck', async () => {
    const rail = new FakeRail();
    const ref = await heldPayout(rail);
    const report = await reconcilePayouts({ railFor: fakeRails(rail), clock: minutesLater(10) });
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(0);
    expect((await getPayout(ref.agentId, ref.payoutId))?.status).toBe('HELD');
    expect(report.stuck).toBe(0);
  });

  it('an enabled agent’s payout is paid as before', async () => {
    const rail = new FakeRail();
    const agentId = await fundedAgent('USD', 20_00);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '10.01' }), noQueue));
    expect(await drivePayout({ agentId, payoutId }, { railFor: fakeRails(rail) })).toBe('completed');
    expect(rail.paymentsFor(payoutId)).toHaveLength(1);
  });
});

describe('the operator releases a held payout', () => {
  it('HELD → PENDING; the next attempt pays it once although the agent stays disabled', async () => {
    const rail = new FakeRail();
    const ref = await heldPayout(rail);
    const released = await releasePayout(ref.agentId, ref.payoutId);
    expect([released.statusCode, body(released).status]).toEqual([200, 'PENDING']);
    expect(await getPayout(ref.agentId, ref.payoutId)).toMatchObject({ status: 'PENDING', releasedAt: expect.any(String) });
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('completed');
    expect(rail.paymentsFor(ref.payoutId)).toHaveLength(1);
    // Released again: answered as it is now, nothing moves.
    expect(body(await releasePayout(ref.agentId, ref.payoutId)).status).toBe('COMPLETED');
  });

  it('a release counts for the disable it answered: enabled and disabled again since, it is held again', async () => {
    const rail = new FakeRail();
    const ref = await heldPayout(rail);
    await releasePayout(ref.agentId, ref.payoutId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await setAgentEnabled(ref.agentId, true);
    await setAgentEnabled(ref.agentId, false);
    expect(await drivePayout(ref, { railFor: fakeRails(rail) })).toBe('held');
    expect(rail.calls).toBe(0);
    expect((await getPayout(ref.agentId, ref.payoutId))?.releasedAt).toBeUndefined();
  });

  it('refuses a payout that was never held (409) and an unknown one (404)', async () => {
    const agentId = await fundedAgent('USD', 20_00);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '10.01' }), noQueue));
    await expect(releasePayout(agentId, payoutId)).rejects.toThrow('payout is not held');
    await expect(releasePayout(agentId, 'p01jhx3k6v1f8q2n7c9m4p5r6s7')).rejects.toThrow('payout not found');
    await expect(releasePayout('not-an-agent', payoutId)).rejects.toThrow('payout not found');
  });
});

describe('the operator cancels a held payout', () => {
  it('FAILED, cancelled by operator: the gross, fee included, back to the agent; the lock and the fee basis given back', async () => {
    const ref = await heldPayout();
    expect(await feeBasis(ref.agentId)).toMatchObject({ withdrawn: 10_01, feesPaid: 30 });
    const result = await cancelPayout({ ...ref, idempotencyKey: 'cancel-1' });
    expect(result.statusCode).toBe(200);
    expect(body(result)).toMatchObject({ status: 'FAILED', failureReason: 'cancelled by operator', amount: 10.01, fee: 0.3 });
    expect(await balance(ref.agentId)).toBe(20_00);
    expect(await lockOf(ref.agentId)).toBeUndefined();
    expect(await feeBasis(ref.agentId)).toMatchObject({ withdrawn: 0, feesPaid: 0 });
    expect((await listPayoutsByStatus('HELD', { limit: 100 })).payouts.map((p) => p.id)).not.toContain(ref.payoutId);
    // The same key: the same answer, replayed; another payout under it: 422; a second key: not held any more.
    const again = await cancelPayout({ ...ref, idempotencyKey: 'cancel-1' });
    expect([again.rawBody, again.headers?.['idempotent-replayed']]).toEqual([result.rawBody, 'true']);
    await expect(cancelPayout({ ...ref, payoutId: 'p01jhx3k6v1f8q2n7c9m4p5r6s7', idempotencyKey: 'cancel-1' })).rejects.toThrow(
      'payout not found',
    );
    await expect(cancelPayout({ ...ref, idempotencyKey: 'cancel-2' })).rejects.toThrow('payout is not held');
    expect(await balance(ref.agentId)).toBe(20_00);
  });

  it('the same key for another held payout of the agent is 422, nothing moved', async () => {
    const first = await heldPayout();
    await cancelPayout({ ...first, idempotencyKey: 'shared-key' });
    await setAgentEnabled(first.agentId, true);
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(first.agentId, { amount: '5' }), noQueue));
    await setAgentEnabled(first.agentId, false);
    expect(await drivePayout({ agentId: first.agentId, payoutId }, { railFor: fakeRails(new FakeRail()) })).toBe('held');
    await expect(cancelPayout({ agentId: first.agentId, payoutId, idempotencyKey: 'shared-key' })).rejects.toMatchObject({
      code: 'idempotencyMismatch',
    });
    expect((await getPayout(first.agentId, payoutId))?.status).toBe('HELD');
  });

  it('refuses a payout not held: one in flight may be moving money at its rail', async () => {
    const ref = await disabledWithPayout();
    await expect(cancelPayout({ ...ref, idempotencyKey: 'cancel-pending' })).rejects.toThrow('payout is not held');
    expect(await balance(ref.agentId)).toBe(20_00 - 10_01);
  });
});

describe('held payout races', () => {
  it('many cancels with different keys: one credits the gross, the rest are refused; never twice', async () => {
    const ref = await heldPayout();
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => cancelPayout({ ...ref, idempotencyKey: `race-${i}` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as Error).message).toBe('payout is not held');
    expect(await balance(ref.agentId)).toBe(20_00);
  });

  it('many cancels with one key: one movement, one answer for all', async () => {
    const ref = await heldPayout();
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => cancelPayout({ ...ref, idempotencyKey: 'one-key' })));
    const answers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.rawBody] : []));
    expect(new Set(answers).size).toBe(1);
    for (const r of results)
      if (r.status === 'rejected') expect((r.reason as Error).message).toBe('request with this Idempotency-Key is in progress');
    expect(await balance(ref.agentId)).toBe(20_00);
  });

  it('a cancel and a release at once: exactly one wins; released → paid once, cancelled → refunded once', async () => {
    for (let i = 0; i < 4; i++) {
      const rail = new FakeRail();
      const ref = await heldPayout(rail);
      const [cancel, release] = await Promise.allSettled([
        cancelPayout({ ...ref, idempotencyKey: `mix-${i}` }),
        releasePayout(ref.agentId, ref.payoutId),
      ]);
      const cancelled = cancel.status === 'fulfilled';
      const released = release.status === 'fulfilled' && body(release.value).status === 'PENDING';
      expect([cancelled, released].filter(Boolean)).toHaveLength(1);
      await drivePayout(ref, { railFor: fakeRails(rail) });
      const final = await getPayout(ref.agentId, ref.payoutId);
      expect(final?.status).toBe(cancelled ? 'FAILED' : 'COMPLETED');
      expect(rail.paymentsFor(ref.payoutId)).toHaveLength(cancelled ? 0 : 1);
      expect(await balance(ref.agentId)).toBe(cancelled ? 20_00 : 20_00 - 10_01);
    }
  });
});
