/**
 * The console's controls a person expects (DESIGN §26, issue 40) in the packaged Chromium against
 * the local stack: the Statement (in Activity's place: every movement with its signed amount and
 * the balance after it, its filters, its CSV, its empty state); each destructive action — `Revoke`, `Rotate account key`, `Remove` (a passkey),
 * `Sign out everywhere` — opens a confirmation page that says what will end, `Cancel` goes back
 * and the page's button acts; Security lists the sessions and `End` ends one. Every page on the
 * way: no sideways scroll at 375 px, no serious or critical axe-core violation (at 1280 px too).
 * `SCREENSHOTS=<folder>` saves them.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { auditAfterAll } from '../support/audit';
import { useConsoleStack } from '../support/browser-console';
import { consoleClient } from '../support/console-http';
import { addVirtualAuthenticator, expectQualityBars, signUpWithPasskey } from './console';

// A browser per test (the fixture's default: the packaged Chromium runs single-process).
const { t, newPage, signedInPage } = useConsoleStack();
auditAfterAll();

const mainText = (page: Page) => page.locator('main').innerText();

describe('confirmations and sessions in a browser', () => {
  it('Security lists the sessions and End ends one; Remove and Sign out everywhere ask first', async () => {
    const { context, page } = await newPage();
    await addVirtualAuthenticator(context, page);
    const key = await signUpWithPasskey(page, t.base, 'Grace');
    // A second session, elsewhere, with the account key.
    const c = consoleClient(t.base);
    const elsewhere = await c.signInWithKey(key);
    if (!elsewhere) throw new Error('no key session');

    await page.goto(`${t.base}/console/security`);
    const sessions = page.locator('ul.sessions > li');
    expect(await sessions.count()).toBe(2);
    expect(await sessions.filter({ hasText: 'This browser' }).innerText()).toContain('Signed in with passkey Grace');
    expect(await sessions.filter({ hasText: 'Signed in with account key' }).count()).toBe(1);
    await expectQualityBars(page, 'security-sessions');

    await Promise.all([
      page.waitForURL(`${t.base}/console/security?done=ended`),
      sessions
        .filter({ hasText: 'Signed in with account key' })
        .getByRole('button', { name: /^End session \d$/ })
        .click(),
    ]);
    expect(await page.getByRole('status').innerText()).toContain('Session ended');
    expect(await sessions.count()).toBe(1);
    expect(await c.signedIn(elsewhere)).toBe(false);

    // Remove: the confirmation names the passkey and says this session ends with it; Cancel goes back.
    await Promise.all([
      page.waitForURL(/\/console\/security\/passkeys\/.+\/remove$/),
      page.getByRole('link', { name: 'Remove passkey 1: Grace' }).click(),
    ]);
    expect(await page.locator('h1').innerText()).toBe('Remove this passkey?');
    expect(await mainText(page)).toContain('this one included: you are signed out here');
    await expectQualityBars(page, 'confirm-remove-passkey');
    await Promise.all([page.waitForURL(`${t.base}/console/security`), page.getByRole('link', { name: 'Cancel' }).click()]);

    // Sign out everywhere: the confirmation counts the sessions; its button signs out.
    await Promise.all([
      page.waitForURL(`${t.base}/console/security/sign-out-everywhere`),
      page.getByRole('link', { name: 'Sign out everywhere' }).click(),
    ]);
    expect(await mainText(page)).toContain('1 session, this browser and 0 others');
    await expectQualityBars(page, 'confirm-sign-out-everywhere');
    await Promise.all([
      page.waitForURL(`${t.base}/console/login`),
      page.getByRole('button', { name: 'Sign out everywhere', exact: true }).click(),
    ]);
  });

  it('Revoke and Rotate account key ask first, say what ends, and act from the confirmation', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent('Forecast Bot');
    for (const description of ['forecasts', 'lookups']) {
      const made = await t.call('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': payer.key },
        body: { agentId: agent.id, currency: 'USD', limits: { total: 10, daily: 4 }, description },
      });
      expect(made.status).toBe(201);
    }
    const { page } = await signedInPage(payer.key, '/console/grants');

    const card = page.locator('li.card').filter({ hasText: 'forecasts' });
    await Promise.all([page.waitForURL(/\/console\/grants\/g[0-9a-z]+\/revoke$/), card.getByRole('link', { name: /^Revoke/ }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Revoke this grant?');
    const text = await mainText(page);
    expect(text).toContain('Forecast Bot can no longer charge you in USD');
    expect(text).toContain('10.00 USD of 10.00 USD in total; 4.00 USD of 4.00 USD today (UTC)');
    await expectQualityBars(page, 'confirm-revoke');
    await Promise.all([page.waitForURL(/\/console\/grants(#.*)?$/), page.getByRole('button', { name: 'Revoke grant' }).click()]);
    expect(await card.innerText()).toContain('Revoked');

    await page.goto(`${t.base}/console/developers`);
    await Promise.all([
      page.waitForURL(`${t.base}/console/developers/rotate`),
      page.getByRole('link', { name: 'Rotate account key' }).click(),
    ]);
    expect(await page.locator('h1').innerText()).toBe('Rotate your account key?');
    const ends = await page.locator('ul.ends').innerText();
    expect(ends).toContain('1 active grant revoked');
    expect(ends).toContain('0 webhook endpoints deleted');
    expect(ends).toContain('1 session signed out, this one included');
    await expectQualityBars(page, 'confirm-rotate');
    await Promise.all([page.waitForURL(`${t.base}/console/developers`), page.getByRole('link', { name: 'Cancel' }).click()]);
    await page.getByRole('link', { name: 'Rotate account key' }).click();
    await page.waitForURL(`${t.base}/console/developers/rotate`);
    await Promise.all([
      page.waitForURL(`${t.base}/console/developers/rotate`, { waitUntil: 'load' }),
      page.getByRole('button', { name: 'Rotate account key' }).click(),
    ]);
    await page.locator('h1', { hasText: 'New account key' }).waitFor();
    expect(await page.locator('#account-key').inputValue()).toMatch(/^uk_live_/);
  });

  it('the Statement: empty state first, then every movement with its signed amount and balance after, filtered, in CSV', async () => {
    const payer = await t.fundedUser();
    const { page } = await signedInPage(payer.key);
    await Promise.all([page.waitForURL(`${t.base}/console/statement`), page.getByRole('link', { name: 'Statement' }).click()]);
    expect(await mainText(page)).toContain('Nothing has moved your balance yet.');
    expect(await page.getByRole('link', { name: 'Add funds' }).count()).toBeGreaterThan(0);
    await expectQualityBars(page, 'statement-empty');

    const credited = await t.call('POST', `/api/v1/admin/users/${payer.id}/credits`, {
      headers: { ...t.admin, 'idempotency-key': `credit-${payer.id}` },
      raw: '{"amount":50,"currency":"USD"}',
    });
    expect(credited.status).toBe(200);
    const weather = await t.enabledAgent('Weather Bot');
    const search = await t.enabledAgent('Search Helper');
    const pay = async (agent: { key: string }, amount: number, description: string, extra: Record<string, unknown> = {}) =>
      t.call<{ id: string }>('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': `${description}-${payer.id}` },
        raw: JSON.stringify({ amount, currency: 'USD', description, ...extra }),
      });
    expect((await pay(weather, 4.5, 'forecast for Lisbon')).status).toBe(201);
    expect((await pay(search, 1.25, 'web search: "train times Porto"')).status).toBe(201);
    const hold = await pay(weather, 10, 'hourly forecasts, held', { capture: false });
    expect(hold.status).toBe(201);
    const released = await t.call('POST', `/api/v1/agents/charge/${hold.body.id}/release`, {
      headers: { 'x-agent-key': weather.key, 'idempotency-key': `release-${payer.id}` },
    });
    expect(released.status).toBe(200);
    expect((await pay(weather, 2, 'radar image')).status).toBe(201);

    await page.goto(`${t.base}/console/statement`);
    const rows = page.getByRole('region', { name: 'Statement' }).locator('tbody tr');
    expect(await rows.count()).toBe(6);
    expect(await rows.nth(0).innerText()).toContain('\u22122.00 USD');
    expect(await rows.nth(0).innerText()).toContain('42.25 USD');
    expect(await rows.filter({ hasText: 'Hold released' }).innerText()).toContain('+10.00 USD');
    expect(await rows.last().innerText()).toContain('+50.00 USD');
    await expectQualityBars(page, 'statement-charges');

    await page.getByLabel('Agent').selectOption({ label: 'Weather Bot' });
    await page.getByLabel('Search').fill('forecast');
    await Promise.all([page.waitForURL(/\/console\/statement\?.*q=forecast/), page.getByRole('button', { name: 'Apply filters' }).click()]);
    expect(await rows.count()).toBe(3);
    await expectQualityBars(page, 'statement-filtered');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    const csv = (await readFile(await download.path(), 'utf8')).split('\r\n');
    expect(csv[0]).toBe('id,createdAt,type,counterparty,description,amount,currency,balanceAfter,status,grantId,reference');
    expect(csv.filter((line) => line.startsWith('st'))).toHaveLength(3);

    // Activity's old address lands here, its compatible filters kept.
    await page.goto(`${t.base}/console/activity?currency=USD&status=SUCCESS`);
    expect(page.url()).toBe(`${t.base}/console/statement?currency=USD`);

    // Every kind of row the page shows a person (and docs/console/statement-*.png pictures): a
    // top-up paid at PayPal, a refund of a settled charge, an open tab with some uses (DESIGN §29),
    // and the Receipt link of each settled row (DESIGN §27).
    const topup = await t.call<{ id: string; approveUrl: string }>('POST', '/api/v1/users/me/topups', {
      headers: { 'x-user-key': payer.key },
      body: { currency: 'USD', amount: 20 },
    });
    expect(topup.status).toBe(201);
    await t.stack.rails.paypal.approveOrder(new URL(topup.body.approveUrl).searchParams.get('token') ?? '', 'ok');
    const radar = await pay(search, 3.2, 'image search: "Douro valley"');
    expect(radar.status).toBe(201);
    const refunded = await t.call('POST', `/api/v1/agents/charge/${radar.body.id}/refund`, {
      headers: { 'x-agent-key': search.key, 'idempotency-key': `refund-${payer.id}` },
      body: { amount: 1.2 },
    });
    expect(refunded.status).toBe(200);
    const tab = await t.call<{ id: string }>('POST', '/api/v1/agents/tabs', {
      headers: { 'x-agent-key': weather.key, 'x-user-key': payer.key, 'idempotency-key': `tab-${payer.id}` },
      body: { currency: 'USD', limit: 5, description: 'minute-by-minute rain alerts', ttlSeconds: 7200 },
    });
    expect(tab.status).toBe(201);
    for (const [n, amount] of [0.35, 0.4, 0.25].entries()) {
      const used = await t.call('POST', `/api/v1/agents/tabs/${tab.body.id}/usage`, {
        headers: { 'x-agent-key': weather.key, 'idempotency-key': `use-${payer.id}-${n}` },
        body: { amount, description: `alert ${n + 1}` },
      });
      expect(used.status).toBe(200);
    }
    await page.goto(`${t.base}/console/statement`);
    const tabs = page.getByRole('region', { name: 'Open tabs' });
    expect(await tabs.innerText()).toMatch(/Weather Bot\s+minute-by-minute rain alerts\s+1\.00 USD of 5\.00 USD/);
    expect(await rows.filter({ hasText: 'Top-up' }).first().innerText()).toContain('+20.00 USD');
    expect(await rows.filter({ hasText: 'Refund' }).first().innerText()).toContain('+1.20 USD');
    const receipt = rows
      .filter({ hasText: 'Douro valley' })
      .filter({ hasText: 'Charge' })
      .getByRole('link', { name: /^Receipt/ });
    expect(await receipt.count()).toBe(1);
    await expectQualityBars(page, 'statement');

    // The receipt of a settled charge: what, how much, between whom, the JWS wrapped; back to the Statement.
    await Promise.all([page.waitForURL(/\/console\/receipts\/c[0-9a-z]+$/), receipt.click()]);
    expect(await page.locator('h1').innerText()).toBe('Receipt');
    expect(await mainText(page)).toContain('3.20 USD');
    await expectQualityBars(page, 'receipt');
    await Promise.all([page.waitForURL(`${t.base}/console/statement`), page.getByRole('link', { name: 'Back to the statement' }).click()]);
  });
});
