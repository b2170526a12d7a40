/**
 * DynamoDB faults on the money paths, injected at the service's own client (DynamoDB Local never
 * produces them): TransactionConflict and throttling on charges, credits, withdrawals and a
 * payout's final transition, both absorbed by retries and past every retry. Whatever happens, a
 * request moves money once or not at all, the answer says which, and the ledger audit holds.
 */
import { config } from '../../functions/config';
import { expectLedgerBalanced } from '../support/audit';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';
import {
  crash,
  inject,
  isCharge,
  isCredit,
  isPayoutFinalize,
  isWithdrawalCommit,
  throttled,
  timedOut,
  transactionConflict,
} from './inject';
import { expectEachPayoutPaidOnce, untilFinal } from './payout-checks';

const t = useTestStack(
  { AUTH_CACHE_TTL_MS: '0', RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);

const attempts = () => config().TRANSACTION_MAX_ATTEMPTS;

type Money = { USD: number; USDC: number };

async function userBalances(id: string): Promise<Money> {
  return (await t.call<{ balances: Money }>('GET', `/api/v1/admin/users/${id}`, { headers: t.admin })).body.balances;
}
async function agentBalances(key: string): Promise<Money> {
  return (await t.call<{ balances: Money }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances;
}
async function chargeCount(key: string): Promise<number> {
  return (await t.call<{ pagination: { total: number } }>('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': key } })).body
    .pagination.total;
}

function charge(agentKey: string, userKey: string, idempotencyKey: string, amount = '2.5') {
  return t.call<{ id?: string; status?: string; error?: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': idempotencyKey },
    raw: `{"amount":${amount},"currency":"USD","description":"fault"}`,
  });
}

describe('charges under DynamoDB faults', () => {
  it('commits exactly once when TransactionConflict hits every attempt but the last', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isCharge, times: attempts() - 1, error: transactionConflict });
    try {
      const res = await charge(agent.key, user.key, 'conflicted');
      expect([res.status, res.body.status]).toEqual([201, 'SUCCESS']);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(attempts() - 1);
    expect((await userBalances(user.id)).USD).toBe(7.5);
    expect((await agentBalances(agent.key)).USD).toBe(2.5);
    expect(await chargeCount(agent.key)).toBe(1);
    await expectLedgerBalanced();
  });

  it('answers 409 with Retry-After and moves nothing when conflicts outlast every retry; the client retry then charges once', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isCharge, times: attempts(), error: transactionConflict });
    try {
      const res = await charge(agent.key, user.key, 'contended');
      expect([res.status, res.body.error, res.headers.get('retry-after')]).toEqual([
        409,
        'request with this Idempotency-Key is in progress',
        '1',
      ]);
    } finally {
      fault.remove();
    }
    expect((await userBalances(user.id)).USD).toBe(10);
    expect(await chargeCount(agent.key)).toBe(0);
    await expectLedgerBalanced();

    const retry = await charge(agent.key, user.key, 'contended');
    expect([retry.status, retry.headers.get('idempotent-replayed')]).toEqual([201, null]);
    const replay = await charge(agent.key, user.key, 'contended');
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.id]).toEqual([201, 'true', retry.body.id]);
    expect((await userBalances(user.id)).USD).toBe(7.5);
    expect(await chargeCount(agent.key)).toBe(1);
    await expectLedgerBalanced();
  });

  it('absorbs throttling inside the SDK retries (DynamoDB answered ProvisionedThroughputExceeded twice)', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({
      command: 'TransactWriteItemsCommand',
      match: isCharge,
      times: 2,
      error: throttled,
      where: 'inside-sdk-retries',
    });
    try {
      const res = await charge(agent.key, user.key, 'throttled-briefly');
      expect(res.status).toBe(201);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(2);
    expect((await userBalances(user.id)).USD).toBe(7.5);
    expect(await chargeCount(agent.key)).toBe(1);
    await expectLedgerBalanced();
  });

  it('answers 503 service busy with Retry-After when throttling outlasts the SDK and the service; nothing moved', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isCharge, times: attempts(), error: throttled });
    try {
      const res = await charge(agent.key, user.key, 'throttled-long');
      expect([res.status, res.body.error, res.headers.get('retry-after')]).toEqual([503, 'service busy, retry later', '1']);
    } finally {
      fault.remove();
    }
    expect((await userBalances(user.id)).USD).toBe(10);
    expect(await chargeCount(agent.key)).toBe(0);
    const retry = await charge(agent.key, user.key, 'throttled-long');
    expect(retry.status).toBe(201);
    expect((await userBalances(user.id)).USD).toBe(7.5);
    await expectLedgerBalanced();
  });

  it('answers 503 (never 500) when the authentication read stays throttled; nothing moved', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({ command: 'BatchGetItemCommand', times: 1, error: throttled });
    try {
      const res = await charge(agent.key, user.key, 'auth-throttled');
      expect([res.status, res.body.error, res.headers.get('retry-after')]).toEqual([503, 'service busy, retry later', '1']);
    } finally {
      fault.remove();
    }
    expect((await userBalances(user.id)).USD).toBe(10);
    await expectLedgerBalanced();
  });

  it('answers 503 (never 500) when the commit landed but its answer timed out; the retry with the same key replays the one charge', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isCharge, times: 1, error: timedOut, where: 'after-response' });
    try {
      const res = await charge(agent.key, user.key, 'answer-lost');
      expect([res.status, res.body.error, res.headers.get('retry-after')]).toEqual([503, 'service busy, retry later', '1']);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(1);
    const retry = await charge(agent.key, user.key, 'answer-lost');
    expect([retry.status, retry.body.status]).toEqual([201, 'SUCCESS']);
    expect((await userBalances(user.id)).USD).toBe(7.5);
    expect(await chargeCount(agent.key)).toBe(1);
    await expectLedgerBalanced();
  });

  it('answers 503 (never 500) when a read times out past the SDK retries; nothing moved', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const fault = inject({ command: 'BatchGetItemCommand', times: 1, error: timedOut });
    try {
      const res = await charge(agent.key, user.key, 'auth-timed-out');
      expect([res.status, res.body.error, res.headers.get('retry-after')]).toEqual([503, 'service busy, retry later', '1']);
    } finally {
      fault.remove();
    }
    expect((await userBalances(user.id)).USD).toBe(10);
    await expectLedgerBalanced();
  });
});

describe('credits under DynamoDB faults', () => {
  it('credits once through conflicts, and not at all (409) when they outlast every retry', async () => {
    const user = await t.fundedUser();
    const credit = (key: string) =>
      t.call('POST', `/api/v1/admin/users/${user.id}/credits`, {
        headers: { ...t.admin, 'idempotency-key': key },
        raw: '{"amount":4,"currency":"USDC"}',
      });
    const some = inject({ command: 'TransactWriteItemsCommand', match: isCredit, times: attempts() - 1, error: transactionConflict });
    try {
      expect((await credit('credit-1')).status).toBe(200);
    } finally {
      some.remove();
    }
    const all = inject({ command: 'TransactWriteItemsCommand', match: isCredit, times: attempts(), error: transactionConflict });
    try {
      expect((await credit('credit-2')).status).toBe(409);
    } finally {
      all.remove();
    }
    expect((await userBalances(user.id)).USDC).toBe(4);
    await expectLedgerBalanced();
  });
});

describe('withdrawals and payouts under DynamoDB faults', () => {
  const withdraw = (agentKey: string, key: string, body: Record<string, unknown>) =>
    t.call<{ payoutId: string; error?: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agentKey, 'idempotency-key': key },
      body,
    });

  it('commits a withdrawal once through conflicts; past every retry answers 409, debits nothing and leaves no lock', async () => {
    const agent = await t.earningAgent({ USD: 30 });
    const some = inject({
      command: 'TransactWriteItemsCommand',
      match: isWithdrawalCommit,
      times: attempts() - 1,
      error: transactionConflict,
    });
    let payoutId: string;
    try {
      const res = await withdraw(agent.key, 'wd-conflicts', { amount: 10, currency: 'USD', walletAddress: 'success@example.com' });
      expect(res.status).toBe(200);
      payoutId = res.body.payoutId;
    } finally {
      some.remove();
    }
    expect(await untilFinal(t, agent.key, payoutId)).toBe('COMPLETED');
    expect((await agentBalances(agent.key)).USD).toBe(20);

    const all = inject({ command: 'TransactWriteItemsCommand', match: isWithdrawalCommit, times: attempts(), error: transactionConflict });
    try {
      const res = await withdraw(agent.key, 'wd-exhausted', { amount: 10, currency: 'USD', walletAddress: 'success@example.com' });
      expect([res.status, res.body.error]).toEqual([409, 'request with this Idempotency-Key is in progress']);
    } finally {
      all.remove();
    }
    expect((await agentBalances(agent.key)).USD).toBe(20);
    // No lock was left behind: the same request goes through now, once.
    const retry = await withdraw(agent.key, 'wd-exhausted', { amount: 10, currency: 'USD', walletAddress: 'success@example.com' });
    expect(retry.status).toBe(200);
    expect(await untilFinal(t, agent.key, retry.body.payoutId)).toBe('COMPLETED');
    expect((await agentBalances(agent.key)).USD).toBe(10);
    await expectEachPayoutPaidOnce(t);
    await expectLedgerBalanced();
  });

  it('finishes a payout whose final transaction keeps conflicting (the worker retries later) and pays it once', async () => {
    const agent = await t.earningAgent({ USDC: 30 });
    // More conflicts than one attempt's retries: the first delivery gives up after paying.
    const fault = inject({
      command: 'TransactWriteItemsCommand',
      match: isPayoutFinalize,
      times: attempts() + 2,
      error: transactionConflict,
    });
    try {
      const wallet = solanaWallet();
      t.stack.rails.solana.createTokenAccount(wallet); // the rail never creates it (docs/rails.md)
      const res = await withdraw(agent.key, 'wd-final-conflicts', { amount: 12, currency: 'USDC', walletAddress: wallet });
      expect(res.status).toBe(200);
      expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('COMPLETED');
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(attempts() + 2);
    expect((await agentBalances(agent.key)).USDC).toBe(18);
    await expectEachPayoutPaidOnce(t);
    await expectLedgerBalanced();
  });

  it('refunds a refused payout exactly once even when its FAILED transition is throttled and then crashes', async () => {
    const agent = await t.earningAgent({ USD: 30 });
    const throttle = inject({ command: 'TransactWriteItemsCommand', match: isPayoutFinalize, times: attempts(), error: throttled });
    const crashed = inject({ command: 'TransactWriteItemsCommand', match: isPayoutFinalize, times: 1, error: crash });
    try {
      const res = await withdraw(agent.key, 'wd-refund', { amount: 10, currency: 'USD', walletAddress: 'fail@example.com' });
      expect(res.status).toBe(200);
      expect((await agentBalances(agent.key)).USD).toBe(20);
      expect(await untilFinal(t, agent.key, res.body.payoutId)).toBe('FAILED');
    } finally {
      throttle.remove();
      crashed.remove();
    }
    expect(throttle.hits() + crashed.hits()).toBe(attempts() + 1);
    expect((await agentBalances(agent.key)).USD).toBe(30);
    await expectEachPayoutPaidOnce(t);
    await expectLedgerBalanced();
  });
});
