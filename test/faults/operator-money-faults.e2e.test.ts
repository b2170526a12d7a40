/**
 * Faults in the operator's money movements (docs/lifecycle.md "The operator returns a disabled
 * agent's earnings", docs/payouts.md "Held payouts"), against the local stack, injected at the
 * service's own DynamoDB client (./inject.ts): the answer of a committed transaction lost on the way
 * back, and TransactionConflict on every attempt or all but the last. Whatever happens, a retry with
 * the same Idempotency-Key answers the first outcome and the money moves exactly once; the ledger
 * audit holds after each.
 */
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { cancelPayout, refundChargeByOperator } from '../support/answers';
import { expectLedgerBalanced } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';
import { inject, timedOut, transactionConflict } from './inject';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1', AUTH_CACHE_TTL_MS: '0' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Input = { TransactItems?: { Update?: { UpdateExpression?: string; ExpressionAttributeValues?: Record<string, unknown> } }[] };
const updates = (input: Record<string, unknown>) => ((input as Input).TransactItems ?? []).map((i) => i.Update);
/** The operator's refund: the charge update that keeps the operator's share. */
const isOperatorRefund = (input: Record<string, unknown>) =>
  updates(input).some((u) => /operatorRefundedAmount/.test(u?.UpdateExpression ?? ''));
/** The cancel of a held payout: HELD → FAILED. */
const isCancel = (input: Record<string, unknown>) =>
  updates(input).some((u) => u?.ExpressionAttributeValues?.[':held'] === 'HELD' && u.ExpressionAttributeValues[':failed'] === 'FAILED');
const attempts = async () => (await import('../../functions/config')).config().TRANSACTION_MAX_ATTEMPTS;

let n = 0;
const key = () => `op-fault-${Date.now()}-${++n}`;
const userBalance = async (userId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USD;
const earned = async (agentId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/agents/${agentId}`, { headers: t.admin })).body.balances.USD;
const operatorRefund = (agentId: string, chargeId: string, idem: string, body: unknown = {}) =>
  t.call<{ refundedAmount: number; error?: string }>('POST', `/api/v1/admin/agents/${agentId}/charges/${chargeId}/refund`, {
    headers: { ...t.admin, 'idempotency-key': idem },
    body,
  });

/** A disabled agent that earned 10 USD from a payer, and its charge. */
async function disabledEarner() {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const res = await t.call<{ id: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key() },
    body: { amount: 10, currency: 'USD', description: 'faults' },
  });
  expect(res.status).toBe(201);
  await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } });
  return { user, agent, chargeId: res.body.id };
}

/** A disabled agent whose 10 USD withdrawal (its message lost before the disable) is held. */
async function heldPayout() {
  const agent = await t.earningAgent({ USD: 10 });
  const lost = inject({ client: 'sqs', command: 'SendMessageCommand', times: 1, error: () => new Error('injected: SQS unreachable') });
  let payoutId: string;
  try {
    const res = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': key() },
      body: { amount: 10, currency: 'USD', walletAddress: 'success@example.com' },
    });
    expect(res.status).toBe(200);
    payoutId = res.body.payoutId;
  } finally {
    lost.remove();
  }
  await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } });
  await eventually('the payout held', async () => (await getPayout(agent.id, payoutId))?.status === 'HELD');
  return { agent, payoutId };
}

describe("the operator's refund", () => {
  it('whose answer was lost after the commit: the retry with the same key replays it, the payer credited once', async () => {
    const { user, agent, chargeId } = await disabledEarner();
    const idem = key();
    const lost = inject({
      command: 'TransactWriteItemsCommand',
      match: isOperatorRefund,
      times: 1,
      error: timedOut,
      where: 'after-response',
    });
    try {
      // In-process: over HTTP a lost answer is a 503 the caller retries; here the use case's own view.
      await expect(refundChargeByOperator({ agentId: agent.id, chargeId, idempotencyKey: idem, baseUrl: t.stack.url })).rejects.toThrow();
    } finally {
      lost.remove();
    }
    expect(lost.hits()).toBe(1);
    const replay = await operatorRefund(agent.id, chargeId, idem);
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.refundedAmount]).toEqual([200, 'true', 10]);
    expect([await userBalance(user.id), await earned(agent.id)]).toEqual([10, 0]);
  });

  it('conflicting on every attempt but the last commits once; past every retry it moves nothing, and the retry does', async () => {
    const { user, agent, chargeId } = await disabledEarner();
    const max = await attempts();
    let fault = inject({ command: 'TransactWriteItemsCommand', match: isOperatorRefund, times: max - 1, error: transactionConflict });
    try {
      expect((await operatorRefund(agent.id, chargeId, key(), { amount: 4 })).body.refundedAmount).toBe(4);
    } finally {
      fault.remove();
    }
    const idem = key();
    fault = inject({ command: 'TransactWriteItemsCommand', match: isOperatorRefund, times: max, error: transactionConflict });
    try {
      const res = await operatorRefund(agent.id, chargeId, idem);
      expect([res.status, res.body]).toEqual([409, { error: 'request with this Idempotency-Key is in progress' }]);
    } finally {
      fault.remove();
    }
    expect([await userBalance(user.id), await earned(agent.id)]).toEqual([4, 6]);
    expect((await operatorRefund(agent.id, chargeId, idem)).body.refundedAmount).toBe(10);
    expect([await userBalance(user.id), await earned(agent.id)]).toEqual([10, 0]);
  });
});

describe('the cancel of a held payout', () => {
  it('whose answer was lost after the commit: the retry replays it, the gross back once', async () => {
    const { agent, payoutId } = await heldPayout();
    const idem = key();
    const lost = inject({ command: 'TransactWriteItemsCommand', match: isCancel, times: 1, error: timedOut, where: 'after-response' });
    try {
      await expect(cancelPayout({ agentId: agent.id, payoutId, idempotencyKey: idem })).rejects.toThrow();
    } finally {
      lost.remove();
    }
    expect(lost.hits()).toBe(1);
    const replay = await t.call<{ status: string }>('POST', `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/cancel`, {
      headers: { ...t.admin, 'idempotency-key': idem },
    });
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.status]).toEqual([200, 'true', 'FAILED']);
    expect(await earned(agent.id)).toBe(10);
  });

  it('conflicting past every retry: 409, still HELD, nothing moved; the retry cancels it once', async () => {
    const { agent, payoutId } = await heldPayout();
    const idem = key();
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isCancel, times: await attempts(), error: transactionConflict });
    const cancel = () =>
      t.call<{ status: string; error?: string }>('POST', `/api/v1/admin/agents/${agent.id}/payouts/${payoutId}/cancel`, {
        headers: { ...t.admin, 'idempotency-key': idem },
      });
    try {
      const res = await cancel();
      expect([res.status, res.body]).toEqual([409, { error: 'request with this Idempotency-Key is in progress' }]);
    } finally {
      fault.remove();
    }
    expect((await getPayout(agent.id, payoutId))?.status).toBe('HELD');
    expect(await earned(agent.id)).toBe(0);
    const res = await cancel();
    expect([res.status, res.body.status]).toEqual([200, 'FAILED']);
    expect(await earned(agent.id)).toBe(10);
  });
});
