/**
 * Withdrawals over HTTP against the local stack: the real handlers, local SQS, the real worker
 * and reconciler, and the real rails against their local stand-ins (LiteSVM, PayPal imitation).
 */
import type * as z from 'zod';
import { agentBalanceBody } from '../../functions/contracts/responses/accounts';
import { payoutBody, type withdrawalBody } from '../../functions/contracts/responses/payouts';
import { auditAfterAll } from '../support/audit';
import { expectBody } from '../support/bodies';
import { eventually } from '../support/eventually';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1', AUTH_CACHE_TTL_MS: '0' },
  { payouts: { visibilityTimeoutSeconds: 1, reconcileIntervalMs: 250 } },
);

auditAfterAll();

// The bodies' types are the contract's; `error` is there for the refusals read through the same type.
type WithdrawAnswer = z.output<typeof withdrawalBody> & { error?: string };
type PayoutBody = z.output<typeof payoutBody> & { error?: string };

let keySeq = 0;
const newKey = () => `e2e-wd-${process.pid}-${++keySeq}-${Date.now()}`;

function withdraw(agentKey: string, body: unknown, idempotencyKey: string = newKey()) {
  return t.call<WithdrawAnswer>('POST', '/api/v1/agents/withdraw', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': idempotencyKey },
    ...(typeof body === 'string' ? { raw: body } : { body }),
  });
}

async function balances(agentKey: string): Promise<{ USD: number; USDC: number }> {
  return expectBody(await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } }), agentBalanceBody).balances;
}

async function payoutOf(agentKey: string, payoutId: string) {
  return t.call<PayoutBody>('GET', `/api/v1/agents/withdraw?payoutId=${payoutId}`, { headers: { 'x-agent-key': agentKey } });
}

function until(agentKey: string, payoutId: string, status: string, timeoutMs = 20_000): Promise<PayoutBody> {
  return eventually(
    `payout ${payoutId} to be ${status}`,
    async () => {
      const payout = expectBody(await payoutOf(agentKey, payoutId), payoutBody);
      if (payout.status !== status) throw new Error(`payout ${payoutId} still ${payout.status}, wanted ${status}`);
      return payout;
    },
    { timeoutMs },
  );
}

describe('POST /api/v1/agents/withdraw errors, in order: auth, Idempotency-Key, body, schema, destination, balance', () => {
  it('401 for a missing key (naming the header), invalid agent for an unknown or disabled one, before anything else is looked at', async () => {
    const noKey = await t.call('POST', '/api/v1/agents/withdraw', { raw: 'not json' });
    expect(noKey.status).toBe(401);
    expect(noKey.body).toEqual({ error: 'missing x-agent-key header' });
    const unknown = await withdraw(`ag_live_${'x'.repeat(44)}`, 'not json');
    expect([unknown.status, unknown.body.error]).toEqual([401, 'invalid agent']);

    const agent = await t.enabledAgent();
    await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } });
    const disabled = await withdraw(agent.key, { amount: 5, currency: 'USD', walletAddress: 'a@example.com' });
    expect([disabled.status, disabled.body.error]).toEqual([401, 'invalid agent']);
  });

  it('400 missing Idempotency-key, then invalid json body, then the schema, then the destination', async () => {
    const agent = await t.enabledAgent();
    const noIdem = await t.call('POST', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': agent.key }, raw: 'not json' });
    expect([noIdem.status, noIdem.body]).toEqual([400, { error: 'missing Idempotency-key' }]);

    for (const raw of ['not json', '', '[1]', '12', '{"amount":']) {
      const res = await withdraw(agent.key, raw);
      expect([res.status, res.body.error]).toEqual([400, 'invalid json body']);
    }

    const schema: [unknown, string][] = [
      [{ currency: 'USD', walletAddress: 'a@example.com' }, 'amount is required'],
      [{ amount: '10', currency: 'USD', walletAddress: 'a@example.com' }, 'amount must be a number'],
      [{ amount: 10, currency: 'EUR', walletAddress: 'a@example.com' }, 'currency must be one of USD, USDC'],
      [{ amount: 10, walletAddress: 'a@example.com' }, 'currency is required'],
      [{ amount: 10, currency: 'USD' }, 'walletAddress is required'],
      [{ amount: 10, currency: 'USD', walletAddress: '' }, 'walletAddress must not be empty'],
      [{ amount: 10, currency: 'USD', walletAddress: 'a@example.com', memo: 'x' }, 'unknown field: memo'],
      [{ amount: 0.99, currency: 'USD', walletAddress: 'not-an-account' }, 'amount must be at least 1'],
      [{ amount: 0, currency: 'USDC', walletAddress: 'not-an-address' }, 'amount must be at least 1'],
      [{ amount: -3, currency: 'USD', walletAddress: 'a@example.com' }, 'amount must be at least 1'],
      [{ amount: 1.001, currency: 'USD', walletAddress: 'a@example.com' }, 'amount has more than 2 decimal places for USD'],
      [{ amount: 2000000, currency: 'USD', walletAddress: 'a@example.com' }, 'amount must not exceed 1000000'],
    ];
    for (const [body, error] of schema) {
      const res = await withdraw(agent.key, body);
      expect([res.status, res.body.error]).toEqual([400, error]);
    }

    // Destination before balance: this agent has earned nothing.
    const solana = await withdraw(agent.key, { amount: 5, currency: 'USDC', walletAddress: 'agent@example.com' });
    expect([solana.status, solana.body.error]).toEqual([400, 'invalid solana address']);
    const paypal = await withdraw(agent.key, { amount: 5, currency: 'USD', walletAddress: solanaWallet() });
    expect([paypal.status, paypal.body.error]).toEqual([400, 'invalid paypal account']);
    const poor = await withdraw(agent.key, { amount: 5, currency: 'USD', walletAddress: 'agent@example.com' });
    expect([poor.status, poor.body.error]).toEqual([400, 'insufficient balance']);
  });

  it('400 payout already in progress while the agent has a payout in flight; 422 for a reused key', async () => {
    const agent = await t.earningAgent({ USD: 50 });
    // An unclaimed PayPal payout stays PROCESSING (and holds the lock) until the recipient claims it.
    const first = await withdraw(agent.key, { amount: 10, currency: 'USD', walletAddress: 'unclaimed@example.com' }, 'held-1');
    expect(first.status).toBe(200);
    await until(agent.key, first.body.payoutId, 'PROCESSING');
    const second = await withdraw(agent.key, { amount: 10, currency: 'USD', walletAddress: 'agent@example.com' });
    expect([second.status, second.body.error]).toEqual([400, 'payout already in progress']);
    const reused = await withdraw(agent.key, { amount: 11, currency: 'USD', walletAddress: 'unclaimed@example.com' }, 'held-1');
    expect([reused.status, reused.body.error]).toEqual([422, 'idempotency key reused with different request']);
    expect((await balances(agent.key)).USD).toBe(40);

    // The recipient claims it: the reconciler's next look completes it and frees the lock.
    const batch = t.stack.rails.paypal.batchBySenderId(first.body.payoutId);
    if (!batch) throw new Error('no PayPal batch for the payout');
    t.stack.rails.paypal.setItemStatus(batch.payoutBatchId, 'SUCCESS');
    const done = await until(agent.key, first.body.payoutId, 'COMPLETED');
    expect(done.externalId).toBe(batch.payoutBatchId);
    expect((await withdraw(agent.key, { amount: 10, currency: 'USD', walletAddress: 'agent@example.com' })).status).toBe(200);
  });
});

describe('withdrawals through the rails', () => {
  it('pays a USDC withdrawal on Solana: 200 breakdown, then COMPLETED with txHash; the wallet receives the net amount once', async () => {
    const agent = await t.earningAgent({ USDC: '25.5' });
    const wallet = solanaWallet();
    t.stack.rails.solana.createTokenAccount(wallet); // the rail never creates it (docs/rails.md)
    const res = await withdraw(agent.key, { amount: 20, currency: 'USDC', walletAddress: wallet });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      payoutId: expect.stringMatching(/^p[0-9a-z]{26}$/),
      breakdown: {
        grossAmount: 20,
        platformFeeRate: '3%',
        platformFee: 0.6,
        netAmount: 19.4,
        currency: 'USDC',
        walletAddress: wallet,
        network: 'SOL',
      },
    });
    expect((await balances(agent.key)).USDC).toBe(5.5);

    const done = await until(agent.key, res.body.payoutId, 'COMPLETED');
    expect(done).toMatchObject({
      id: res.body.payoutId,
      agentId: agent.id,
      currency: 'USDC',
      destination: { network: 'SOL', walletAddress: wallet },
      amount: 20,
      fee: 0.6,
      netAmount: 19.4,
      platformFeeRate: '3%',
      failureReason: null,
    });
    expect(done.txHash).toEqual(expect.any(String));
    expect(done.externalId).toBe(done.txHash);
    expect(Date.parse(done.processedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(done.createdAt));
    const solana = t.stack.rails.solana;
    expect(solana.tokenBalance(wallet)).toBe(19_400_000n);
    const landed = solana.landed().filter((tx) => tx.memo === `payout:${res.body.payoutId}`);
    expect(landed).toHaveLength(1);
    expect(landed[0]?.signature).toBe(done.txHash);
  });

  it('pays a USD withdrawal through PayPal: COMPLETED with the batch id as externalId and no txHash', async () => {
    const agent = await t.earningAgent({ USD: '10.01' });
    const res = await withdraw(agent.key, { amount: 10.01, currency: 'USD', walletAddress: 'agent@example.com' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('"grossAmount":10.01,"platformFeeRate":"3%","platformFee":0.3,"netAmount":9.71');
    const done = await until(agent.key, res.body.payoutId, 'COMPLETED');
    const batch = t.stack.rails.paypal.batchBySenderId(res.body.payoutId);
    expect(batch?.items).toHaveLength(1);
    expect(batch?.items[0]?.amount).toEqual({ value: '9.71', currency: 'USD' });
    expect(done).toMatchObject({ externalId: batch?.payoutBatchId, txHash: null, amount: 10.01, fee: 0.3, netAmount: 9.71 });
    expect((await balances(agent.key)).USD).toBe(0);
  });

  it('replays a retried withdrawal: the same payoutId, Idempotent-Replayed, one payout', async () => {
    const agent = await t.earningAgent({ USD: 30 });
    const body = { amount: 12, currency: 'USD', walletAddress: 'ABCDEFGH23456' };
    const first = await withdraw(agent.key, body, 'retry-me');
    const again = await withdraw(agent.key, body, 'retry-me');
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await until(agent.key, first.body.payoutId, 'COMPLETED');
    const later = await withdraw(agent.key, body, 'retry-me');
    expect(later.body.payoutId).toBe(first.body.payoutId);
    expect((await balances(agent.key)).USD).toBe(18);
    const list = await t.call<{ payouts: PayoutBody[] }>('GET', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': agent.key } });
    expect(list.body.payouts.map((p) => p.id)).toEqual([first.body.payoutId]);
  });

  it('refunds a payout the network refuses: FAILED, gross back in the balance, next withdrawal accepted', async () => {
    const agent = await t.earningAgent({ USD: 20 });
    const res = await withdraw(agent.key, { amount: 15, currency: 'USD', walletAddress: 'failed@example.com' });
    expect(res.status).toBe(200);
    const failed = await until(agent.key, res.body.payoutId, 'FAILED');
    expect(failed.failureReason).toEqual(expect.stringContaining('FAILED'));
    expect(failed.processedAt).toEqual(expect.any(String));
    expect((await balances(agent.key)).USD).toBe(20);
    const next = await withdraw(agent.key, { amount: 20, currency: 'USD', walletAddress: 'agent@example.com' });
    expect(next.status).toBe(200);
    await until(agent.key, next.body.payoutId, 'COMPLETED');
  });
});

describe('withdraw races over HTTP', () => {
  it('lets one of many concurrent withdrawals with different keys through; the balance never goes negative', async () => {
    const agent = await t.earningAgent({ USD: 30 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => withdraw(agent.key, { amount: 25, currency: 'USD', walletAddress: 'unclaimed@example.com' })),
    );
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted).toHaveLength(1);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(400);
      expect(['payout already in progress', 'insufficient balance']).toContain(refused.body.error);
    }
    expect((await balances(agent.key)).USD).toBe(5);
    const list = await t.call<{ payouts: PayoutBody[] }>('GET', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': agent.key } });
    expect(list.body.payouts).toHaveLength(1);
    // Let it finish so the ledger audit sees no payout left in flight by accident.
    const batch = await waitForBatch(accepted[0]?.body.payoutId ?? '');
    t.stack.rails.paypal.setItemStatus(batch, 'SUCCESS');
    await until(agent.key, accepted[0]?.body.payoutId ?? '', 'COMPLETED');
  });

  it('turns concurrent requests with one Idempotency-Key into one payout and one answer', async () => {
    const agent = await t.earningAgent({ USDC: 30 });
    const wallet = solanaWallet();
    t.stack.rails.solana.createTokenAccount(wallet); // the rail never creates it (docs/rails.md)
    const body = { amount: 12.5, currency: 'USDC', walletAddress: wallet };
    const answers = await Promise.all(Array.from({ length: 8 }, () => withdraw(agent.key, body, 'same-key')));
    const ok = answers.filter((a) => a.status === 200);
    // A duplicate that cannot be answered from a committed record yet may be told to retry.
    for (const other of answers.filter((a) => a.status !== 200)) {
      expect([other.status, other.body.error]).toEqual([409, 'request with this Idempotency-Key is in progress']);
    }
    expect(new Set(ok.map((a) => a.body.payoutId)).size).toBe(1);
    const payoutId = ok[0]?.body.payoutId ?? '';
    await until(agent.key, payoutId, 'COMPLETED');
    expect(t.stack.rails.solana.landed().filter((tx) => tx.memo === `payout:${payoutId}`)).toHaveLength(1);
    expect((await balances(agent.key)).USDC).toBe(17.5);
  });
});

async function waitForBatch(payoutId: string): Promise<string> {
  const batch = await eventually(`a PayPal batch for ${payoutId}`, () => t.stack.rails.paypal.batchBySenderId(payoutId));
  return batch.payoutBatchId;
}

describe('GET /api/v1/agents/withdraw', () => {
  it('lists newest first with limit and nextCursor; ?payoutId= answers one Payout; 404 for unknown or foreign ids', async () => {
    const agent = await t.earningAgent({ USD: 40 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await withdraw(agent.key, { amount: 5 + i, currency: 'USD', walletAddress: 'ABCDEFGH23456' });
      ids.push(res.body.payoutId);
      await until(agent.key, res.body.payoutId, 'COMPLETED');
    }
    const headers = { 'x-agent-key': agent.key };
    const all = await t.call<{ payouts: PayoutBody[]; nextCursor: string | null }>('GET', '/api/v1/agents/withdraw', { headers });
    expect(all.status).toBe(200);
    expect(all.body.payouts.map((p) => p.id)).toEqual([...ids].reverse());
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.payouts[0]).toMatchObject({ status: 'COMPLETED', amount: 7, fee: 0.21, netAmount: 6.79, txHash: null });

    const page1 = await t.call<{ payouts: PayoutBody[]; nextCursor: string | null }>('GET', '/api/v1/agents/withdraw?limit=2', { headers });
    expect(page1.body.payouts.map((p) => p.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await t.call<{ payouts: PayoutBody[]; nextCursor: string | null }>(
      'GET',
      `/api/v1/agents/withdraw?limit=2&cursor=${page1.body.nextCursor}`,
      { headers },
    );
    expect(page2.body.payouts.map((p) => p.id)).toEqual([ids[0]]);
    expect(page2.body.nextCursor).toBeNull();
    // The cursor carries its limit: without one it continues with 2; with another one it is refused.
    const sameSize = await t.call<{ payouts: PayoutBody[] }>('GET', `/api/v1/agents/withdraw?cursor=${page1.body.nextCursor}`, {
      headers,
    });
    expect(sameSize.body.payouts.map((p) => p.id)).toEqual([ids[0]]);
    const resized = await t.call('GET', `/api/v1/agents/withdraw?limit=3&cursor=${page1.body.nextCursor}`, { headers });
    expect([resized.status, resized.body]).toEqual([400, { error: 'cursor is invalid' }]);

    const one = await payoutOf(agent.key, ids[0] ?? '');
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(ids[0]);

    const other = await t.enabledAgent();
    const foreign = await payoutOf(other.key, ids[0] ?? '');
    expect([foreign.status, foreign.body.error]).toEqual([404, 'payout not found']);
    for (const id of ['p00000000000000000000000000', 'nope', '']) {
      const res = await payoutOf(agent.key, id);
      expect([res.status, res.body.error]).toEqual([404, 'payout not found']);
    }
    const empty = await t.call<{ payouts: PayoutBody[] }>('GET', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': other.key } });
    expect(empty.body).toEqual({ payouts: [], nextCursor: null });
  });

  it('400 for bad query values, 401 invalid agent without a valid key', async () => {
    const agent = await t.enabledAgent();
    const headers = { 'x-agent-key': agent.key };
    for (const [query, error] of [
      ['limit=101', 'limit must be at most 100'],
      ['limit=0', 'limit must be a positive integer'],
      ['cursor=garbage', 'cursor is invalid'],
      ['page=2', 'unknown field: page'],
    ]) {
      const res = await t.call('GET', `/api/v1/agents/withdraw?${query}`, { headers });
      expect([res.status, res.body]).toEqual([400, { error }]);
    }
    const res = await t.call('GET', '/api/v1/agents/withdraw', {});
    expect([res.status, res.body]).toEqual([401, { error: 'missing x-agent-key header' }]);
  });
});
