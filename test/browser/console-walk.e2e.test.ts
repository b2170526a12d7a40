/**
 * The console walked once, end to end, as a new person walks it (DESIGN §21, issue 31), in the
 * packaged Chromium with a CDP virtual authenticator, finding everything by the §21 labels:
 * sign up with a passkey → the welcome page shows the account key once → Add funds: USD with the
 * PayPal imitation's checkout and USDC by a real transfer on the local chain carrying the Solana
 * Pay reference → Limits: an approval threshold → Grants: a grant to an agent, its key shown once
 * → the agent charges above the threshold over HTTP with that grant key → Approvals: approved in
 * the console → the Statement shows it (in Activity's place, DESIGN §26) → the CSV has it. Balances are checked on the page and on the
 * API after every step that moves money, and every page met on the way — the eight pages, the
 * sign-in, sign-up and welcome pages, a top-up's own page, a grant's shown-once page, the consent
 * and the approval pages — fits 375 px and 1280 px with no sideways scroll and has no serious or
 * critical axe-core violation (in the dark scheme too, at 375 px). `SCREENSHOTS=<folder>` saves each
 * of them at both widths.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { expectLedgerBalanced } from '../support/audit';
import { useConsoleStack } from '../support/browser-console';
import { pay } from '../topups/support';
import { addVirtualAuthenticator, pageQuality, signUpWithPasskey } from './console';

// One test, one person: one browser for the file.
const { t, browser } = useConsoleStack({ browserPer: 'file' });

/**
 * The page now open at 375 and 1280 px: nothing wider than the window (`scrollWidth <=
 * clientWidth`, the page's own box, scrollbar excluded), no serious or critical axe-core violation.
 */
async function expectFits(page: Page, name: string): Promise<void> {
  for (const width of [375, 1280]) {
    const { violations } = await pageQuality(page, width);
    const { scrollWidth, clientWidth } = (await page.evaluate(
      '({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })',
    )) as { scrollWidth: number; clientWidth: number };
    expect({ name, width, sideways: scrollWidth > clientWidth ? `${scrollWidth} > ${clientWidth}` : 'none', violations }).toEqual({
      name,
      width,
      sideways: 'none',
      violations: [],
    });
    const folder = process.env.SCREENSHOTS;
    if (folder) await page.screenshot({ path: join(folder, `${name}-${width}.png`), fullPage: true });
  }
  // The console follows the system's dark scheme (color-scheme: light dark): its contrast is checked too.
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await pageQuality(page, 375);
  const folder = process.env.SCREENSHOTS;
  if (folder) await page.screenshot({ path: join(folder, `${name}-375-dark.png`), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  expect({ name, dark: dark.violations }).toEqual({ name, dark: [] });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Follows a link of the console's navigation, as a person does. */
async function open(page: Page, label: string, path: string): Promise<void> {
  await Promise.all([
    page.waitForURL(`${t.base}${path}`),
    page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click(),
  ]);
  expect(await page.locator('h1').innerText()).toBe(label);
}

const mainText = (page: Page) => page.locator('main').innerText();

async function apiBalances(key: string): Promise<{ USD: number; USDC: number }> {
  const me = await t.call<{ balances: { USD: number; USDC: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': key } });
  expect(me.status).toBe(200);
  return me.body.balances;
}

/** The Overview's balance card of one currency, as text ("Available 50.00 USD …"). */
async function overviewSays(page: Page, ...texts: string[]): Promise<void> {
  await page.goto(`${t.base}/console`);
  const text = await mainText(page);
  for (const expected of texts) expect(text).toContain(expected);
}

describe('a new payer walks the console', () => {
  it('signs up, adds funds, sets a limit, gives a grant, approves a charge, and finds it in the Statement and the CSV', async () => {
    const context = await browser.newContext({ timezoneId: 'Europe/Lisbon', acceptDownloads: true });
    const page = await context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });

    // Signed out: the sign-in and sign-up pages.
    await page.goto(`${t.base}/console/login`);
    expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).count()).toBe(1);
    await expectFits(page, 'login');
    await page.goto(`${t.base}/console/signup`);
    await expectFits(page, 'signup');

    // Sign-up with a passkey; the welcome page shows the account key once.
    await addVirtualAuthenticator(context, page);
    const accountKey = await signUpWithPasskey(page, t.base, 'Walker');
    expect(accountKey).toMatch(/^uk_live_/);
    expect(await mainText(page)).toContain('never for agents: give agents grants');
    await expectFits(page, 'welcome');
    await Promise.all([page.waitForURL(`${t.base}/console`), page.getByRole('link', { name: 'Continue to the console' }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Overview');
    expect(await mainText(page)).toContain('0.00 USD');
    await expectFits(page, 'overview-new');
    await page.goto(`${t.base}/console/welcome`);
    expect(await page.locator('.key').count()).toBe(0);
    expect(await apiBalances(accountKey)).toEqual({ USD: 0, USDC: 0 });

    // Add funds, USD: PayPal's checkout (the imitation's approval page), credited by its webhook.
    await page.goto(`${t.base}/console`);
    await open(page, 'Add funds', '/console/funds');
    expect(await mainText(page)).toContain('No top-ups yet');
    await expectFits(page, 'funds-new');
    const usd = page.getByRole('region', { name: 'USD with PayPal' });
    await usd.getByLabel('Amount').fill('50');
    await Promise.all([
      page.waitForURL(/\/console\/funds\/topups\/[^/]+$/),
      usd.getByRole('button', { name: 'Continue to PayPal' }).click(),
    ]);
    expect(await page.locator('h1').innerText()).toBe('USD top-up of 50.00 USD');
    await expectFits(page, 'funds-topup-usd');
    const payPal = page.getByRole('link', { name: 'Pay 50.00 USD with PayPal' });
    await Promise.all([page.waitForURL(/\/checkoutnow\?token=/), payPal.click()]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Approve', exact: true }).click()]);
    expect(await apiBalances(accountKey)).toEqual({ USD: 50, USDC: 0 });
    await page.goto(`${t.base}/console/funds`);
    const usdRow = page.getByRole('region', { name: 'Your top-ups' }).locator('tbody tr').filter({ hasText: 'USD (PayPal)' });
    expect(await usdRow.innerText()).toMatch(/50\.00 USD\s+Completed/);
    await overviewSays(page, '50.00 USD', '0.00 USDC');

    // Add funds, USDC: the Solana Pay request paid by a real transfer on the local chain, found by its reference.
    await open(page, 'Add funds', '/console/funds');
    const usdc = page.getByRole('region', { name: 'USDC from a Solana wallet' });
    await usdc.getByLabel('Amount').fill('12.5');
    await Promise.all([
      page.waitForURL(/\/console\/funds\/topups\/[^/]+$/),
      usdc.getByRole('button', { name: 'Create USDC top-up' }).click(),
    ]);
    expect(await page.locator('h1').innerText()).toBe('USDC top-up of 12.50 USDC');
    expect(await page.getByRole('img', { name: /QR code/ }).count()).toBe(1);
    const solanaPayUrl = await page.locator('a[href^="solana:"]').innerText();
    expect(solanaPayUrl).toMatch(/^solana:[1-9A-HJ-NP-Za-km-z]+\?amount=12\.5&spl-token=.+&reference=[1-9A-HJ-NP-Za-km-z]+/);
    await expectFits(page, 'funds-topup-usdc');
    await pay(t, solanaPayUrl, '12.5');
    expect((await createWatcher()()).completed).toBe(1);
    expect(await apiBalances(accountKey)).toEqual({ USD: 50, USDC: 12.5 });
    await page.reload();
    expect(await page.locator('main dl').innerText()).toContain('Completed');
    await overviewSays(page, '50.00 USD', '12.50 USDC');
    await open(page, 'Add funds', '/console/funds');
    await expectFits(page, 'funds');

    // Limits: charges above 10.00 USD wait for the payer's approval.
    await open(page, 'Limits', '/console/limits');
    await expectFits(page, 'limits-new');
    await page.getByLabel('Approval above (USD)').fill('10');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save limits' }).click()]);
    expect(await page.locator('.notice').innerText()).toMatch(/saved/i);
    expect(await page.getByLabel('Approval above (USD)').inputValue()).toBe('10');
    const policy = await t.call<{ approvalAbove?: Record<string, number> }>('GET', '/api/v1/users/me/policy', {
      headers: { 'x-user-key': accountKey },
    });
    expect(policy.body.approvalAbove).toEqual({ USD: 10 });

    // Grants: a grant to an agent, its key shown once.
    const agentName = `walk-weather-bot-${Date.now()}`;
    const agent = await t.enabledAgent(agentName);
    await open(page, 'Grants', '/console/grants');
    await expectFits(page, 'grants-new');
    await page.getByLabel('Agent ID').fill(agent.id);
    await page.getByLabel('Currency').selectOption('USD');
    await page.getByLabel('Per charge').fill('30');
    await page.getByLabel('Daily').fill('40');
    await page.getByLabel('Description').fill('weather lookups');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create grant' }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Grant created');
    const grantKey = (await page.getByLabel('Grant key').inputValue()).trim();
    expect(grantKey).toMatch(/^ug_live_/);
    await expectFits(page, 'grant-created');
    await Promise.all([page.waitForURL(/\/console\/grants\?created=[^#]+#/), page.getByRole('link', { name: 'Back to Grants' }).click()]);
    expect(await page.getByText(grantKey).count()).toBe(0);
    const card = page.locator('li.card').filter({ hasText: agentName });
    expect(await card.innerText()).toContain('0.00 USD of 40.00 USD today (UTC)');
    expect(await card.innerText()).toContain('at most 30.00 USD');
    await expectFits(page, 'grants');

    // The agent charges 25.00 USD over HTTP with the grant key: above 10.00 USD, so it waits, held.
    const charged = await t.call<{ id: string; status: string; pendingReason?: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': grantKey, 'idempotency-key': `walk-${Date.now()}` },
      raw: '{"amount":25,"currency":"USD","description":"forecast for Lisbon"}',
    });
    expect(charged.status).toBe(202);
    expect(charged.body).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval' });
    expect(await apiBalances(accountKey)).toEqual({ USD: 25, USDC: 12.5 });
    await overviewSays(page, '25.00 USD', '1 charge waits for your approval');

    // The approval link the payer gets (by webhook, or from the API): it names the service and says the money is held.
    const listed = await t.call<{ data: { id: string; approvalUrl?: string }[] }>('GET', '/api/v1/users/me/charges', {
      headers: { 'x-user-key': accountKey },
    });
    const approvalUrl = listed.body.data.find((c) => c.id === charged.body.id)?.approvalUrl ?? '';
    expect(approvalUrl).not.toBe('');
    await page.goto(approvalUrl);
    expect(await mainText(page)).toContain('already held from your balance');
    await expectFits(page, 'approval-page');

    // Approvals: approved in the console.
    await page.goto(`${t.base}/console`);
    await Promise.all([
      page.waitForURL(`${t.base}/console/approvals`),
      page.getByRole('link', { name: /charge waits for your approval/ }).click(),
    ]);
    const item = page.locator('ul.items > li').filter({ hasText: 'forecast for Lisbon' });
    expect(await item.innerText()).toContain('25.00 USD');
    expect(await item.innerText()).toContain(agentName);
    await expectFits(page, 'approvals');
    await Promise.all([page.waitForURL(/\/console\/approvals\?done=approved$/), item.getByRole('button', { name: 'Approve' }).click()]);
    expect(await page.locator('.notice').innerText()).toContain('Approved');
    const after = await t.call<{ status: string }>('GET', `/api/v1/agents/charge/${charged.body.id}`, {
      headers: { 'x-agent-key': agent.key },
    });
    expect(after.body.status).toBe('SUCCESS');
    expect(await apiBalances(accountKey)).toEqual({ USD: 25, USDC: 12.5 });
    await overviewSays(page, '25.00 USD', '12.50 USDC');
    expect(await mainText(page)).toContain('Nothing waits for your approval.');
    await expectFits(page, 'overview');
    await open(page, 'Approvals', '/console/approvals');
    await expectFits(page, 'approvals-empty');
    await open(page, 'Grants', '/console/grants');
    expect(await page.locator('li.card').filter({ hasText: agentName }).innerText()).toContain('25.00 USD of 40.00 USD today (UTC)');

    // The Statement (in Activity's place, DESIGN §26) shows the charge with its signed amount and the
    // balance after it; the filters keep a URL.
    await open(page, 'Statement', '/console/statement');
    const row = page.getByRole('region', { name: 'Statement' }).locator('tbody tr').filter({ hasText: 'forecast for Lisbon' }).first();
    // A charge that waited for approval is a hold of the available balance (docs/statement.md): its row stays.
    expect(await row.innerText()).toContain('Hold');
    expect(await row.innerText()).toContain('\u221225.00 USD');
    expect(await row.innerText()).toContain(agentName);
    // The browser gave its zone (the console's script, on every page): times in Lisbon's, and no note saying they are in UTC.
    expect(await mainText(page)).not.toContain('Times are shown in');
    const time = row.locator('time').first();
    const instant = new Date((await time.getAttribute('datetime')) ?? '');
    expect(await time.innerText()).toBe(
      new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Lisbon',
        day: 'numeric',
        month: 'short',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      }).format(instant),
    );
    await expectFits(page, 'statement');
    await page.getByLabel('Currency').selectOption('USD');
    await Promise.all([
      page.waitForURL(/\/console\/statement\?.*currency=USD/),
      page.getByRole('button', { name: 'Apply filters' }).click(),
    ]);
    expect(await page.getByRole('region', { name: 'Statement' }).locator('tbody tr').filter({ hasText: 'USDC' }).count()).toBe(0);

    // Download CSV: the filtered rows, as a spreadsheet reads them.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^statement-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await readFile(await download.path(), 'utf8');
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('id,createdAt,type,counterparty,description,amount,currency,balanceAfter,status,grantId,reference');
    expect(lines.filter((l) => l.endsWith(`,${charged.body.id}`))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^st[0-9a-z]{26},[^,]+,hold,${agentName},forecast for Lisbon,-25\\.00,USD,\\d+\\.\\d{2},PENDING,g[0-9a-z]+,${charged.body.id}$`,
        ),
      ),
    ]);

    // The rest of the console: Developers and Security.
    await open(page, 'Developers', '/console/developers');
    await expectFits(page, 'developers');
    await open(page, 'Security', '/console/security');
    expect(await page.locator('ul.items > li').count()).toBe(1);
    await expectFits(page, 'security');
    await open(page, 'Limits', '/console/limits');
    expect(await mainText(page)).toContain(agentName);
    await expectFits(page, 'limits');

    // The consent page, signed in: no key field, Allow and Deny.
    const asking = await t.call<{ id: string; consentUrl: string }>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `walk-consent-${Date.now()}` },
      body: { currency: 'USDC', limits: { perCharge: 5 }, description: 'more lookups' },
    });
    expect(asking.status).toBe(201);
    await page.goto(asking.body.consentUrl);
    expect(await page.locator('input[name="accountKey"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(1);
    await expectFits(page, 'consent');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Deny' }).click()]);
    expect(await apiBalances(accountKey)).toEqual({ USD: 25, USDC: 12.5 });

    await context.close();
    await expectLedgerBalanced();
  }, 480_000);
});
