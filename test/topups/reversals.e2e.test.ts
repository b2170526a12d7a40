/**
 * PayPal takes money back from a credited USD top-up (issue 19, docs/topups.md, reversals): the
 * PayPal imitation refunds or reverses the capture and sends PAYMENT.CAPTURE.REFUNDED / REVERSED,
 * verified like every PayPal webhook; the refund is read back from PayPal; the payer's balance is
 * debited up to the amount, the shortfall owed (USD charges refused while anything is owed; the
 * next USD top-up pays it first), once per refund id. Faults and races: duplicate and concurrent
 * deliveries, a replay, the transaction throttled past its retries (503, PayPal retries) or dying
 * after its commit, charges racing the reversal. The ledger audit (reversals and debts included)
 * holds after every test.
 */
import { TOPUP_REVERSED_LOG_MESSAGE } from '../../functions/observability/metric-names';
import { db } from '../../functions/store/client';
import { inject, throttled } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { errorLines, getTopup, openTopup, type TopupBody } from './support';

const t = useTestStack();

afterEach(async () => {
  await expectLedgerBalanced();
});

const orderIdOf = (topup: TopupBody) => new URL(topup.approveUrl ?? '').searchParams.get('token') ?? '';
type Me = { balances: { USD: number; USDC: number }; owed: { USD: number; USDC: number } };
const me = async (userKey: string) => (await t.call<Me>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } })).body;

/** A USD top-up of `amount`, approved at PayPal (webhook → capture → credit). */
async function paidTopup(userKey: string, amount: number, funding: 'ok' | 'other-currency' = 'ok') {
  const opened = await openTopup(t, userKey, { currency: 'USD', amount });
  expect(opened.status).toBe(201);
  await t.stack.rails.paypal.approveOrder(orderIdOf(opened.body), funding);
  return (await getTopup(t, userKey, opened.body.id)).body;
}

const charge = (agentKey: string, userKey: string, key: string, amount: number, currency = 'USD', capture = true) =>
  t.call<{ id?: string; status?: string; error?: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body: { amount, currency, description: `charge ${key}`, ...(capture ? {} : { capture: false }) },
  });

/** Posts a delivery's exact bytes and headers again (PayPal retrying the same event). */
const redeliver = (delivery: { headers: Record<string, string>; body: string }) => {
  const { 'content-type': _, ...signed } = delivery.headers;
  return t.call('POST', '/api/v1/paypal/webhooks', { headers: signed, raw: delivery.body });
};

describe('PayPal takes a top-up back', () => {
  it('a refund the balance covers is debited once; duplicate, concurrent and replayed deliveries change nothing', async () => {
    const user = await t.fundedUser();
    const topup = await paidTopup(user.key, 20);
    expect(topup.status).toBe('COMPLETED');
    let refunded: Awaited<ReturnType<typeof t.stack.rails.paypal.refundCapture>>;
    const alarms = await errorLines(async () => {
      refunded = await t.stack.rails.paypal.refundCapture(orderIdOf(topup), { value: '5.00' });
    });
    expect(refunded?.delivery?.status).toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 15, USDC: 0 }, owed: { USD: 0, USDC: 0 } });
    expect(alarms.filter((l) => l.message === TOPUP_REVERSED_LOG_MESSAGE).map((l) => l.attributes)).toEqual([
      expect.objectContaining({ outcome: 'reversed', amount: 500, debited: 500, owed: 0, topupId: topup.id }),
    ]);
    const delivery = refunded?.delivery ?? { headers: {}, body: '' };
    // The same event again, three at once, and a new event about the same refund.
    expect((await redeliver(delivery)).status).toBe(200);
    const together = await Promise.all([redeliver(delivery), redeliver(delivery), redeliver(delivery)]);
    expect(together.map((r) => r.status)).toEqual([200, 200, 200]);
    const refund = refunded?.refund;
    if (!refund) throw new Error('no refund');
    expect((await t.stack.rails.paypal.resendRefundWebhook(refund))?.status).toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 15 }, owed: { USD: 0 } });
    // A second, partial refund of the same capture is its own movement.
    expect((await t.stack.rails.paypal.refundCapture(orderIdOf(topup), { value: '2.50' }))?.delivery?.status).toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 12.5 }, owed: { USD: 0 } });
  });

  it('beyond the balance: debits what is there, owes the rest; USD charges are 402 while owed; the next USD top-up pays it first', async () => {
    const user = await t.fundedUser({ USDC: 5 });
    const agent = await t.enabledAgent();
    const topup = await paidTopup(user.key, 10);
    expect((await charge(agent.key, user.key, 'spent', 7)).status).toBe(201);
    const reversed = await t.stack.rails.paypal.refundCapture(orderIdOf(topup), { eventType: 'PAYMENT.CAPTURE.REVERSED' });
    expect(reversed?.delivery?.status).toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 0, USDC: 5 }, owed: { USD: 7, USDC: 0 } });

    // Owing USD: no USD charge, capture or hold, whatever the balance; USDC is not affected.
    await t.call('POST', `/api/v1/admin/users/${user.id}/credits`, {
      headers: { ...t.admin, 'idempotency-key': `after-reversal-${user.id}` },
      raw: '{"amount":3,"currency":"USD"}',
    });
    const refused = await charge(agent.key, user.key, 'owing', 1);
    expect([refused.status, refused.body]).toEqual([402, { error: 'insufficient balance' }]);
    const hold = await charge(agent.key, user.key, 'owing-hold', 1, 'USD', false);
    expect([hold.status, hold.body]).toEqual([402, { error: 'insufficient balance' }]);
    expect((await charge(agent.key, user.key, 'usdc', 1, 'USDC')).status).toBe(201);
    const history = await t.call<{ data: { status: string; failureReason: string | null }[] }>(
      'GET',
      '/api/v1/users/me/charges?status=FAILED',
      {
        headers: { 'x-user-key': user.key },
      },
    );
    expect(history.body.data.map((c) => c.failureReason)).toEqual(['insufficient balance', 'insufficient balance']);

    // The next USD top-up pays the debt first: 5 of 7, then 4 → 2 to the debt, 2 to the balance.
    const first = await paidTopup(user.key, 5);
    expect(first).toMatchObject({ status: 'COMPLETED', amount: 5 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 3, USDC: 4 }, owed: { USD: 2 } });
    await paidTopup(user.key, 4);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 5 }, owed: { USD: 0 } });
    expect((await charge(agent.key, user.key, 'paid-up', 1)).status).toBe(201);
    expect((await me(user.key)).balances.USD).toBe(4);
  });

  it('a refund of a capture that was never credited moves nothing, and is alarmed', async () => {
    const user = await t.fundedUser({ USD: 2 });
    const failed = await paidTopup(user.key, 6, 'other-currency');
    expect(failed.status).toBe('FAILED');
    const alarms = await errorLines(async () => {
      expect((await t.stack.rails.paypal.refundCapture(orderIdOf(failed)))?.delivery?.status).toBe(200);
    });
    expect(alarms.find((l) => l.message === TOPUP_REVERSED_LOG_MESSAGE)?.attributes).toMatchObject({
      outcome: 'capture was never credited',
    });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 2 }, owed: { USD: 0 } });
  });

  it('a forged reversal is refused (400) and moves nothing', async () => {
    const user = await t.fundedUser();
    const topup = await paidTopup(user.key, 8);
    const captureId = t.stack.rails.paypal.order(orderIdOf(topup))?.capture?.id ?? '';
    const forged = await t.call('POST', '/api/v1/paypal/webhooks', {
      headers: {
        'paypal-auth-algo': 'SHA256withRSA',
        'paypal-cert-url': 'https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77',
        'paypal-transmission-id': 'b2ee2ea0-0000-11ee-0000-000000000001',
        'paypal-transmission-sig': 'Zm9yZ2Vk',
        'paypal-transmission-time': new Date().toISOString(),
      },
      body: {
        id: 'WH-FORGED-REVERSAL',
        event_type: 'PAYMENT.CAPTURE.REVERSED',
        resource: {
          id: 'REFUND-FORGED',
          status: 'COMPLETED',
          amount: { currency_code: 'USD', value: '8.00' },
          links: [{ rel: 'up', href: `https://api.paypal.com/v2/payments/captures/${captureId}` }],
        },
      },
    });
    expect([forged.status, forged.body]).toEqual([400, { error: 'invalid webhook signature' }]);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 8 }, owed: { USD: 0 } });
  });
});

describe('reversal faults and races', () => {
  it('the transaction throttled past its retries answers 503, nothing moves; PayPal’s retry debits once', async () => {
    const user = await t.fundedUser();
    const topup = await paidTopup(user.key, 9);
    const fault = inject({
      command: 'TransactWriteItemsCommand',
      match: (input) => JSON.stringify(input).includes('TOPUPREVERSAL#'),
      times: 1_000,
      error: throttled,
    });
    let delivery: { status: number | 'error'; headers: Record<string, string>; body: string } | undefined;
    try {
      delivery = (await t.stack.rails.paypal.refundCapture(orderIdOf(topup), { value: '4.00' }))?.delivery;
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBeGreaterThanOrEqual(1);
    expect(delivery?.status).toBe(503);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 9 }, owed: { USD: 0 } });
    expect((await redeliver(delivery ?? { headers: {}, body: '' })).status).toBe(200);
    expect((await redeliver(delivery ?? { headers: {}, body: '' })).status).toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 5 }, owed: { USD: 0 } });
  });

  it('a webhook that dies right after the reversal committed leaves it applied once when PayPal retries', async () => {
    const user = await t.fundedUser();
    const topup = await paidTopup(user.key, 6);
    const name = 'die-after-reversal';
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(args.input).includes('TOPUPREVERSAL#')) {
          throw new Error('injected crash after commit');
        }
        return out;
      },
      { step: 'initialize', name },
    );
    let delivery: { status: number | 'error'; headers: Record<string, string>; body: string } | undefined;
    try {
      delivery = (await t.stack.rails.paypal.refundCapture(orderIdOf(topup)))?.delivery;
    } finally {
      db().middlewareStack.remove(name);
    }
    // PayPal saw no 2xx (the function died), so it delivers again.
    expect(delivery?.status).not.toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 0 }, owed: { USD: 0 } });
    expect((await redeliver(delivery ?? { headers: {}, body: '' })).status).toBe(200);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 0 }, owed: { USD: 0 } });
  });

  it('a top-up credited while a reversal lands: either order ends with the same balance and debt', async () => {
    const user = await t.fundedUser();
    const agent = await t.enabledAgent();
    const first = await paidTopup(user.key, 10);
    expect((await charge(agent.key, user.key, `spend-${user.id}`, 10)).status).toBe(201);
    const second = await openTopup(t, user.key, { currency: 'USD', amount: 4 });
    // Credit first: 4 in, then 4 debited and 6 owed. Reversal first: 10 owed, then 4 of it repaid.
    await Promise.all([
      t.stack.rails.paypal.refundCapture(orderIdOf(first), { eventType: 'PAYMENT.CAPTURE.REVERSED' }),
      t.stack.rails.paypal.approveOrder(orderIdOf(second.body)),
    ]);
    expect((await getTopup(t, user.key, second.body.id)).body).toMatchObject({ status: 'COMPLETED', amount: 4 });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 0 }, owed: { USD: 6 } });
  });

  it('charges racing a full reversal: what they took is exactly what is owed', async () => {
    const user = await t.fundedUser();
    const agent = await t.enabledAgent();
    const topup = await paidTopup(user.key, 10);
    const [reversal, ...charges] = await Promise.all([
      t.stack.rails.paypal.refundCapture(orderIdOf(topup), { eventType: 'PAYMENT.CAPTURE.REVERSED' }),
      ...Array.from({ length: 6 }, (_, i) => charge(agent.key, user.key, `race-${user.id}-${i}`, 1)),
    ]);
    expect(reversal?.delivery?.status).toBe(200);
    const taken = charges.filter((c) => c.status === 201).length;
    for (const c of charges.filter((c) => c.status !== 201)) expect([c.status, c.body]).toEqual([402, { error: 'insufficient balance' }]);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 0 }, owed: { USD: taken } });
  });
});
