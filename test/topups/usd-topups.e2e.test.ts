/**
 * USD top-ups by PayPal checkout, end to end against the local stack and the PayPal imitation's
 * Orders v2: the user approves on the imitation's approval page, PayPal's CHECKOUT.ORDER.APPROVED
 * webhook (verified with verify-webhook-signature) or the watcher's polling captures the order,
 * and the capture is credited once per capture id. Faults: the webhook lost, webhook and poll
 * racing, the capture dying between PayPal and the crediting transaction, a forged or replayed
 * webhook. Declined and expired orders end EXPIRED with nothing credited. Bad input and another
 * user's top-up answer as DESIGN §13 says. The ledger audit holds after every test.
 */
import { FAILED_TOPUPS_METRIC, TOPUP_FAILED_LOG_MESSAGE, UNMATCHED_LOG_MESSAGE } from '../../functions/observability/metric-names';
import { listUnmatched } from '../../functions/store/topups/topup-watch.repository';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { crash, inject } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { balances, errorLines, getTopup, openTopup, type TopupBody } from './support';

const t = useTestStack();

afterEach(async () => {
  t.stack.rails.paypal.dropWebhooks(false);
  await expectLedgerBalanced();
});

const watch = (options: Parameters<typeof createWatcher>[0] = {}) => createWatcher(options)();
const orderIdOf = (topup: TopupBody) => new URL(topup.approveUrl ?? '').searchParams.get('token') ?? '';

async function usdTopup(amount: number | string = 25) {
  const user = await t.fundedUser();
  const res = await openTopup(t, user.key, `{"currency":"USD","amount":${amount}}`);
  expect(res.status).toBe(201);
  return { user, topup: res.body };
}

/** What the payer's browser does on the imitation's page: load it, press a button (a form POST). */
async function payerPresses(
  topup: TopupBody,
  button: 'approve' | 'decline',
  funding: 'ok' | 'declined' | 'pending' | 'other-currency' = 'ok',
) {
  const page = await fetch(topup.approveUrl ?? '');
  expect(page.status).toBe(200);
  const html = await page.text();
  const action = /action="([^"]+\/approve)"/.exec(html)?.[1] ?? '';
  const origin = new URL(topup.approveUrl ?? '').origin;
  const target = button === 'approve' ? action : action.replace(/\/approve$/, '/decline');
  const res = await fetch(origin + target, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `funding=${funding}`,
    redirect: 'manual',
  });
  expect(res.status).toBe(200);
  return html;
}

describe('USD top-up by PayPal checkout', () => {
  it('creates an Orders v2 order and answers its approveUrl', async () => {
    const { topup } = await usdTopup('25.5');
    expect(topup).toMatchObject({ currency: 'USD', amount: 25.5, status: 'PENDING', externalId: null });
    const order = t.stack.rails.paypal.order(orderIdOf(topup));
    expect(order).toMatchObject({ status: 'CREATED', amount: { currency_code: 'USD', value: '25.50' }, referenceId: topup.id });
  });

  it('approval at PayPal → verified webhook → capture → credited once, with the capture id', async () => {
    const { user, topup } = await usdTopup(25);
    const html = await payerPresses(topup, 'approve');
    expect(html).toContain('25 USD');
    const after = (await getTopup(t, user.key, topup.id)).body;
    const order = t.stack.rails.paypal.order(orderIdOf(topup));
    expect(order?.status).toBe('COMPLETED');
    expect(after).toMatchObject({ status: 'COMPLETED', amount: 25, externalId: order?.capture?.id });
    expect(await balances(t, user.key)).toEqual({ USD: 25, USDC: 0 });
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 25, USDC: 0 });
  });

  it('a lost webhook is made up for by polling', async () => {
    const { user, topup } = await usdTopup(10);
    t.stack.rails.paypal.dropWebhooks(true);
    await payerPresses(topup, 'approve');
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    await watch();
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 10 });
    expect(await balances(t, user.key)).toEqual({ USD: 10, USDC: 0 });
  });

  it('a webhook and polls racing capture once and credit once', async () => {
    const { user, topup } = await usdTopup(7.25);
    t.stack.rails.paypal.dropWebhooks(true);
    await payerPresses(topup, 'approve');
    t.stack.rails.paypal.dropWebhooks(false);
    const [delivery] = await Promise.all([t.stack.rails.paypal.resendWebhook(orderIdOf(topup)), watch(), watch()]);
    expect(delivery?.status).toBe(200);
    expect(await balances(t, user.key)).toEqual({ USD: 7.25, USDC: 0 });
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 7.25 });
  });

  it('a capture that dies between PayPal and the crediting transaction is credited once by the next run', async () => {
    const { user, topup } = await usdTopup(12);
    t.stack.rails.paypal.dropWebhooks(true);
    await payerPresses(topup, 'approve');
    const fault = inject({
      command: 'TransactWriteItemsCommand',
      match: (input) => JSON.stringify(input).includes('TOPUPCREDIT#PAYPAL'),
      times: 1,
      error: crash,
    });
    try {
      const died = await watch();
      expect(died.errors).toBe(1);
    } finally {
      fault.remove();
    }
    // PayPal captured; nothing was credited yet.
    expect(t.stack.rails.paypal.order(orderIdOf(topup))?.status).toBe('COMPLETED');
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
    const capturesBefore = t.stack.rails.paypal.captureRequests();
    await watch();
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 12, USDC: 0 });
    // The next runs credit the capture PayPal already made: no second capture request.
    expect(t.stack.rails.paypal.captureRequests()).toBe(capturesBefore);
  });

  it('a capture request PayPal answers 503 stays PENDING and is captured by the next run', async () => {
    const { user, topup } = await usdTopup(3);
    t.stack.rails.paypal.dropWebhooks(true);
    await payerPresses(topup, 'approve');
    t.stack.rails.paypal.failNext('capture', 1, 503);
    expect((await watch()).errors).toBe(1);
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 3, USDC: 0 });
  });

  it('refuses a forged webhook and changes nothing; a replayed genuine one changes nothing either', async () => {
    const { user, topup } = await usdTopup(8);
    t.stack.rails.paypal.dropWebhooks(true);
    await payerPresses(topup, 'approve');
    const event = {
      id: 'WH-FORGED',
      event_type: 'CHECKOUT.ORDER.APPROVED',
      resource: { id: orderIdOf(topup), status: 'APPROVED' },
    };
    const forgedHeaders = {
      'paypal-auth-algo': 'SHA256withRSA',
      'paypal-cert-url': 'https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77',
      'paypal-transmission-id': 'b2ee2ea0-0000-11ee-0000-000000000000',
      'paypal-transmission-sig': 'Zm9yZ2Vk',
      'paypal-transmission-time': new Date().toISOString(),
    };
    const forged = await t.call('POST', '/api/v1/paypal/webhooks', { headers: forgedHeaders, body: event });
    expect(forged.status).toBe(400);
    expect(forged.body).toEqual({ error: 'invalid webhook signature' });
    // Refused, its transmission id was not kept: the same again is asked about again, and refused again.
    const forgedAgain = await t.call('POST', '/api/v1/paypal/webhooks', { headers: forgedHeaders, body: event });
    expect(forgedAgain.body).toEqual({ error: 'invalid webhook signature' });
    const unsigned = await t.call('POST', '/api/v1/paypal/webhooks', { body: event });
    expect(unsigned.body).toEqual({ error: 'missing paypal-transmission-id header' });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    expect(t.stack.rails.paypal.order(orderIdOf(topup))?.status).toBe('APPROVED');

    // A genuine delivery, then the same bytes replayed, and a genuine one with its body altered.
    const delivery = await t.stack.rails.paypal.resendWebhook(orderIdOf(topup));
    expect(delivery?.status).toBe(200);
    expect(await balances(t, user.key)).toEqual({ USD: 8, USDC: 0 });
    const { 'content-type': _, ...signed } = delivery?.headers ?? {};
    const replay = await t.call('POST', '/api/v1/paypal/webhooks', { headers: signed, raw: delivery?.body ?? '' });
    // Acknowledged unasked: a 2xx, so PayPal stops retrying; nothing moves.
    expect([replay.status, replay.body]).toEqual([200, { received: true }]);
    expect(await balances(t, user.key)).toEqual({ USD: 8, USDC: 0 });
    // Altered, under a transmission id not seen yet: the signature no longer matches.
    const tampered = await t.call('POST', '/api/v1/paypal/webhooks', {
      headers: { ...signed, 'paypal-transmission-id': 'c0ffee00-0000-4000-8000-000000000001' },
      raw: (delivery?.body ?? '').replace('"CHECKOUT.ORDER.APPROVED"', '"CHECKOUT.ORDER.COMPLETED"'),
    });
    expect(tampered.body).toEqual({ error: 'invalid webhook signature' });
    await watch();
    expect(await balances(t, user.key)).toEqual({ USD: 8, USDC: 0 });
  });

  it('refuses a webhook failing a cheap check with 400 before asking PayPal to verify it, and changes nothing', async () => {
    const { user, topup } = await usdTopup(7);
    t.stack.rails.paypal.dropWebhooks(true);
    await payerPresses(topup, 'approve');
    // A genuine delivery captured on the way (not sent to the service): its headers and body.
    t.stack.rails.paypal.dropWebhooks(false);
    t.stack.rails.paypal.setWebhookUrl('http://127.0.0.1:1/nowhere');
    const genuine = await t.stack.rails.paypal.resendWebhook(orderIdOf(topup));
    t.stack.rails.paypal.setWebhookUrl(`${t.stack.url}/api/v1/paypal/webhooks`);
    const { 'content-type': _, ...signed } = genuine?.headers ?? {};
    const body = genuine?.body ?? '';
    const minutes = (n: number) => new Date(Date.now() + n * 60_000).toISOString();
    const without = (name: string) => Object.fromEntries(Object.entries(signed).filter(([k]) => k !== name));
    const cases: [string, Record<string, string>, string][] = [
      ...['paypal-transmission-id', 'paypal-transmission-time', 'paypal-transmission-sig', 'paypal-cert-url', 'paypal-auth-algo'].map(
        (name): [string, Record<string, string>, string] => [`no ${name}`, without(name), `missing ${name} header`],
      ),
      ...[
        'http://api.sandbox.paypal.com/v1/notifications/certs/CERT-1',
        'https://evil.example.com/v1/notifications/certs/CERT-1',
        'https://api.sandbox.paypal.com.evil.example.com/v1/notifications/certs/CERT-1',
        'https://user@api.paypal.com/v1/notifications/certs/CERT-1',
        'https://api.paypal.com:8443/v1/notifications/certs/CERT-1',
        'https://api.paypal.com/somewhere/else.pem',
        'not a url',
      ].map((url): [string, Record<string, string>, string] => [
        `cert ${url}`,
        { ...signed, 'paypal-cert-url': url },
        'paypal-cert-url is not a PayPal certificate URL',
      ]),
      ['sent 6 minutes ago', { ...signed, 'paypal-transmission-time': minutes(-6) }, 'paypal-transmission-time is not within 5 minutes'],
      ['sent 6 minutes ahead', { ...signed, 'paypal-transmission-time': minutes(6) }, 'paypal-transmission-time is not within 5 minutes'],
      ['time not a time', { ...signed, 'paypal-transmission-time': 'yesterday' }, 'paypal-transmission-time is not within 5 minutes'],
      ['id too long', { ...signed, 'paypal-transmission-id': 'x'.repeat(200) }, 'invalid paypal-transmission-id header'],
    ];
    const verifies = t.stack.rails.paypal.verifyRequests();
    const captures = t.stack.rails.paypal.captureRequests();
    for (const [what, headers, message] of cases) {
      const res = await t.call('POST', '/api/v1/paypal/webhooks', { headers, raw: body });
      expect([what, res.status, res.body]).toEqual([what, 400, { error: message }]);
    }
    expect(t.stack.rails.paypal.verifyRequests()).toBe(verifies);
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    expect(t.stack.rails.paypal.captureRequests()).toBe(captures);

    // The genuine one passes them and is verified once; the same transmission again is acknowledged unasked.
    const first = await t.call('POST', '/api/v1/paypal/webhooks', { headers: signed, raw: body });
    expect([first.status, first.body]).toEqual([200, { received: true }]);
    expect(t.stack.rails.paypal.verifyRequests()).toBe(verifies + 1);
    expect(await balances(t, user.key)).toEqual({ USD: 7, USDC: 0 });
    const again = await t.call('POST', '/api/v1/paypal/webhooks', { headers: signed, raw: body });
    expect([again.status, again.body]).toEqual([200, { received: true }]);
    expect(await balances(t, user.key)).toEqual({ USD: 7, USDC: 0 });
    expect(t.stack.rails.paypal.verifyRequests()).toBe(verifies + 1);
  });

  it('a declined order ends EXPIRED with nothing credited', async () => {
    const { user, topup } = await usdTopup(5);
    await payerPresses(topup, 'decline');
    await watch();
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({ status: 'EXPIRED', externalId: null });
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
  });

  it('a capture PayPal declines ends EXPIRED with nothing credited', async () => {
    const { user, topup } = await usdTopup(6);
    await payerPresses(topup, 'approve', 'declined');
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('EXPIRED');
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
  });

  it('an order never approved expires after its window', async () => {
    const { user, topup } = await usdTopup(4);
    await watch({ now: () => new Date(Date.now() + 4 * 3600_000) });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('EXPIRED');
    // Approving now captures nothing: the order is no longer ours to take.
    await payerPresses(topup, 'approve');
    await watch();
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('EXPIRED');
    expect(t.stack.rails.paypal.order(orderIdOf(topup))?.capture).toBeUndefined();
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
  });
});

describe('PayPal captures a top-up cannot take (issue 19)', () => {
  it(`a capture in another currency ends the top-up FAILED with its reason, alarmed (${FAILED_TOPUPS_METRIC}), nothing credited`, async () => {
    const { user, topup } = await usdTopup(9);
    const alarms = await errorLines(() => payerPresses(topup, 'approve', 'other-currency'));
    const order = t.stack.rails.paypal.order(orderIdOf(topup));
    const captureId = order?.capture?.id ?? '';
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({
      status: 'FAILED',
      failureReason: 'paypal captured another currency',
      externalId: captureId,
      completedAt: null,
    });
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
    expect(alarms.map((l) => l.message)).toEqual(expect.arrayContaining([TOPUP_FAILED_LOG_MESSAGE, UNMATCHED_LOG_MESSAGE]));
    expect(alarms.find((l) => l.message === TOPUP_FAILED_LOG_MESSAGE)?.attributes).toMatchObject({ topupId: topup.id, captureId });
    // The money PayPal took is on the operator's list, in the currency it came in.
    expect((await listUnmatched()).find((u) => u.signature === `PAYPAL-${captureId}`)).toMatchObject({
      reason: 'wrong currency',
      mint: 'EUR',
      amount: '9.00',
      topupId: topup.id,
    });
    // Ended: never polled again, never credited later.
    const capturesBefore = t.stack.rails.paypal.captureRequests();
    await watch();
    expect(t.stack.rails.paypal.captureRequests()).toBe(capturesBefore);
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('FAILED');
  });

  it('a capture still PENDING past the window ends the top-up FAILED, alarmed; its later completion is recorded, not credited', async () => {
    const { user, topup } = await usdTopup(11);
    await payerPresses(topup, 'approve', 'pending');
    const captureId = t.stack.rails.paypal.order(orderIdOf(topup))?.capture?.id ?? '';
    expect(t.stack.rails.paypal.order(orderIdOf(topup))?.capture?.status).toBe('PENDING');
    await watch();
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    // Within the window and a day after it: still waiting for PayPal.
    await watch({ now: () => new Date(Date.parse(topup.expiresAt) + 12 * 3600_000) });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('PENDING');
    const later = new Date(Date.parse(topup.expiresAt) + 5 * 60_000 + 86_400_000 + 1_000);
    let report: Awaited<ReturnType<typeof watch>> | undefined;
    const alarms = await errorLines(async () => {
      report = await watch({ now: () => later });
    });
    expect(report?.failed).toBeGreaterThanOrEqual(1);
    expect(alarms.filter((l) => l.message === TOPUP_FAILED_LOG_MESSAGE && l.attributes.topupId === topup.id)).toHaveLength(1);
    expect((await getTopup(t, user.key, topup.id)).body).toMatchObject({
      status: 'FAILED',
      failureReason: 'paypal capture still pending after the window',
      externalId: captureId,
    });
    // PayPal settles it afterwards and says so: recorded for an operator, alarmed once, never credited.
    const late = await errorLines(async () => {
      const delivery = await t.stack.rails.paypal.completeCapture(orderIdOf(topup));
      expect(delivery?.status).toBe(200);
    });
    expect(late.map((l) => l.message)).toEqual([UNMATCHED_LOG_MESSAGE]);
    expect((await listUnmatched()).find((u) => u.signature === `PAYPAL-${captureId}`)).toMatchObject({
      reason: 'top-up failed',
      amount: '1100',
    });
    const again = await t.stack.rails.paypal.resendWebhook(orderIdOf(topup), 'PAYMENT.CAPTURE.COMPLETED');
    expect(again?.status).toBe(200);
    expect((await listUnmatched()).filter((u) => u.signature === `PAYPAL-${captureId}`)).toHaveLength(1);
    expect(await balances(t, user.key)).toEqual({ USD: 0, USDC: 0 });
    expect((await getTopup(t, user.key, topup.id)).body.status).toBe('FAILED');
  });
});

describe('open top-ups per payer', () => {
  const LIMIT = { error: 'topup limit reached: at most 10 open top-ups' };

  it('the 11th open top-up is 409, exactly, however many are opened at once', async () => {
    const user = await t.fundedUser();
    const results = await Promise.all(Array.from({ length: 16 }, () => openTopup(t, user.key, { currency: 'USDC' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(6);
    for (const r of refused) expect([r.status, r.body]).toEqual([409, LIMIT]);
    const list = await t.call<{ data: TopupBody[] }>('GET', '/api/v1/users/me/topups?limit=100', { headers: { 'x-user-key': user.key } });
    expect(list.body.data.filter((x) => x.status === 'PENDING')).toHaveLength(10);
    // USD too, refused before PayPal is asked: no order is left behind.
    const usd = await openTopup(t, user.key, { currency: 'USD', amount: 5 });
    expect([usd.status, usd.body]).toEqual([409, LIMIT]);
    // Another payer is not affected.
    expect((await openTopup(t, (await t.fundedUser()).key, { currency: 'USDC' })).status).toBe(201);
  });

  it('a top-up that ends (completed, expired or failed) gives its slot back, once', async () => {
    const user = await t.fundedUser();
    const open: TopupBody[] = [];
    for (let i = 0; i < 9; i++) open.push((await openTopup(t, user.key, { currency: 'USDC' })).body);
    const paid = (await openTopup(t, user.key, { currency: 'USD', amount: 3 })).body;
    expect((await openTopup(t, user.key, { currency: 'USDC' })).status).toBe(409);
    await payerPresses(paid, 'approve');
    expect((await getTopup(t, user.key, paid.id)).body.status).toBe('COMPLETED');
    // Completed: one slot back, exactly one.
    const next = await openTopup(t, user.key, { currency: 'USD', amount: 4 });
    expect(next.status).toBe(201);
    expect((await openTopup(t, user.key, { currency: 'USDC' })).status).toBe(409);
    // Failed (another currency): its slot back too.
    await payerPresses(next.body, 'approve', 'other-currency');
    expect((await getTopup(t, user.key, next.body.id)).body.status).toBe('FAILED');
    expect((await openTopup(t, user.key, { currency: 'USDC' })).status).toBe(201);
    expect((await openTopup(t, user.key, { currency: 'USDC' })).status).toBe(409);
    // Expired (the window passed, nothing paid): every slot back.
    await watch({ now: () => new Date(Date.now() + 4 * 3600_000) });
    const reopened = await Promise.all(Array.from({ length: 11 }, () => openTopup(t, user.key, { currency: 'USDC' })));
    expect(reopened.filter((r) => r.status === 201)).toHaveLength(10);
  });
});

describe('top-up requests', () => {
  it.each([
    ['{"currency":"EUR","amount":5}', 'currency must be one of USD, USDC'],
    ['{"amount":5}', 'currency is required'],
    ['{"currency":"USD"}', 'amount is required for USD'],
    ['{"currency":"USD","amount":0}', 'amount must be greater than 0'],
    ['{"currency":"USD","amount":-3}', 'amount must be greater than 0'],
    ['{"currency":"USD","amount":1.005}', 'amount has more than 2 decimal places for USD'],
    ['{"currency":"USD","amount":1000001}', 'amount must not exceed 1000000'],
    ['{"currency":"USD","amount":"5"}', 'amount must be a number'],
    ['{"currency":"USDC","amount":0}', 'amount must be greater than 0'],
    ['{"currency":"USDC","amount":1.0000001}', 'amount has more than 6 decimal places for USDC'],
    ['{"currency":"USDC","extra":1}', 'unknown field: extra'],
  ])('%s → 400 %s, nothing created', async (body, error) => {
    const user = await t.fundedUser();
    const res = await openTopup(t, user.key, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
    const list = await t.call<{ data: unknown[] }>('GET', '/api/v1/users/me/topups', { headers: { 'x-user-key': user.key } });
    expect(list.body.data).toEqual([]);
  });

  it('another user’s top-up, or no such id, is 404 topup not found', async () => {
    const { topup } = await usdTopup(1);
    const other = await t.fundedUser();
    for (const id of [topup.id, 'tnotanid', 't01jhx3k6v1f8q2n7c9m4p5r6s7']) {
      const res = await getTopup(t, other.key, id);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'topup not found' });
    }
  });

  it('needs the user key', async () => {
    const res = await t.call('POST', '/api/v1/users/me/topups', { body: { currency: 'USDC' } });
    expect(res.status).toBe(401);
    expect((await t.call('GET', '/api/v1/users/me/topups')).status).toBe(401);
  });

  it('lists the user’s top-ups newest first, page by page', async () => {
    const user = await t.fundedUser();
    const ids: string[] = [];
    for (const body of [{ currency: 'USDC' }, { currency: 'USD', amount: 2 }, { currency: 'USDC' }])
      ids.push((await openTopup(t, user.key, body)).body.id);
    const first = await t.call<{ data: TopupBody[]; nextCursor: string | null }>('GET', '/api/v1/users/me/topups?limit=2', {
      headers: { 'x-user-key': user.key },
    });
    expect(first.body.data.map((x) => x.id)).toEqual([ids[2], ids[1]]);
    const second = await t.call<{ data: TopupBody[]; nextCursor: string | null }>(
      'GET',
      `/api/v1/users/me/topups?cursor=${first.body.nextCursor}`,
      { headers: { 'x-user-key': user.key } },
    );
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
  });
});
