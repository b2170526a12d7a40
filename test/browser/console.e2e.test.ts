/**
 * The console in a real browser (DESIGN §21, docs/console.md), with a CDP virtual authenticator:
 * a person signs up with a passkey, sees the account key once, signs out and back in with the
 * passkey; a payer approves an agent's charge above their approval amount in the console; every
 * page the framework serves fits 375 px and has no serious or critical axe-core violation.
 */
import { auditAfterAll } from '../support/audit';
import { useConsoleStack } from '../support/browser-console';
import { addVirtualAuthenticator, expectQualityBars, signInWithPasskey, signUpWithPasskey } from './console';

// A browser per test (the fixture's default: the packaged Chromium runs single-process).
const { t, browser, newPage, signedInPage } = useConsoleStack();
auditAfterAll();

describe('the console in a browser', () => {
  it('signs up with a passkey, shows the account key once, signs out, and signs in again with the passkey', async () => {
    const { context, page } = await newPage();
    await addVirtualAuthenticator(context, page);
    const key = await signUpWithPasskey(page, t.base, 'Ada');
    expect(key).toMatch(/^uk_live_/);
    expect(await page.locator('main').innerText()).toContain('never for agents: give agents grants');
    await expectQualityBars(page, 'welcome');
    await Promise.all([page.waitForURL(`${t.base}/console`), page.getByRole('link', { name: 'Continue to the console' }).click()]);
    expect(await page.locator('main').innerText()).toContain('0.00 USD');
    // The key is shown once: the welcome page again does not show it.
    await page.goto(`${t.base}/console/welcome`);
    expect(await page.locator('.key').count()).toBe(0);
    // The new payer's key works on the API, on the same account.
    const me = await t.call<{ balances: Record<string, number> }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': key } });
    expect(me.status).toBe(200);
    expect(me.body.balances).toEqual({ USD: 0, USDC: 0 });

    await page.goto(`${t.base}/console`);
    await Promise.all([page.waitForURL(`${t.base}/console/login`), page.getByRole('button', { name: 'Sign out' }).click()]);
    expect((await page.goto(`${t.base}/console`))?.url()).toBe(`${t.base}/console/login?next=%2Fconsole`);
    const assertions: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/console/login/verify')) assertions.push(request.postData() ?? '');
    });
    await signInWithPasskey(page, t.base);
    expect(page.url()).toBe(`${t.base}/console`);
    expect(await page.locator('h1').innerText()).toBe('Overview');
    // The very assertion that signed in, sent again: its challenge is gone, no second session.
    expect(assertions).toHaveLength(1);
    const replay = await fetch(`${t.base}/console/login/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.base },
      body: assertions[0],
    });
    expect(replay.status).toBe(401);
    expect(replay.headers.getSetCookie()).toEqual([]);
  });

  it('approves an agent charge above the approval amount in the console', async () => {
    const agent = await t.enabledAgent(`approval-bot-${Date.now()}`);
    const user = await t.fundedUser({ USD: 100 });
    const policy = await t.call('PUT', '/api/v1/users/me/policy', {
      headers: { 'x-user-key': user.key },
      body: { approvalAbove: { USD: 10 } },
    });
    expect(policy.status).toBe(200);
    const charge = await t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `console-approve-${Date.now()}` },
      raw: '{"amount":25,"currency":"USD","description":"a big lookup"}',
    });
    expect(charge.status).toBe(202);

    const { page } = await signedInPage(user.key);
    expect(await page.locator('main').innerText()).toContain('1 charge waits for your approval');
    await Promise.all([
      page.waitForURL(`${t.base}/console/approvals`),
      page.getByRole('link', { name: /charge waits for your approval/ }).click(),
    ]);
    const item = page.locator('ul.items > li').filter({ hasText: 'a big lookup' });
    expect(await item.innerText()).toContain('25.00 USD');
    await expectQualityBars(page, 'approvals');
    await Promise.all([page.waitForURL(/\/console\/approvals\?done=approved$/), item.getByRole('button', { name: 'Approve' }).click()]);
    expect(await page.locator('.notice').innerText()).toContain('Approved');
    const after = await t.call<{ status: string }>('GET', `/api/v1/agents/charge/${charge.body.id}`, {
      headers: { 'x-agent-key': agent.key },
    });
    expect(after.body.status).toBe('SUCCESS');
    await page.goto(`${t.base}/console`);
    expect(await page.locator('main').innerText()).toContain('75.00 USD');
    await expectQualityBars(page, 'overview');
  });

  it('adds a passkey on Security for a payer who signed in with the account key, then signs in with it', async () => {
    const user = await t.fundedUser({ USD: 5 });
    const { context, page } = await signedInPage(user.key);
    await page.goto(`${t.base}/console/security`);
    expect(await page.locator('main').innerText()).toContain('You have no passkey yet');
    await addVirtualAuthenticator(context, page);
    // The fresh proof a session the account key opened gives (DESIGN §24): the key, typed again.
    await page.getByLabel('Passkey name').fill('This laptop');
    await page.getByLabel('Account key').fill('uk_live_not-the-key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.locator('#passkey-error:not([hidden])').waitFor();
    expect(await page.locator('#passkey-error').innerText()).toBe('invalid account key');
    await page.getByLabel('Account key').fill(user.key);
    await Promise.all([
      page.waitForURL(`${t.base}/console/security?done=added`),
      page.getByRole('button', { name: 'Add a passkey' }).click(),
    ]);
    expect(await page.locator('ul.items > li').count()).toBe(1);
    expect(await page.locator('ul.items > li').innerText()).toContain('This laptop');
    expect(await page.locator('ul.items > li').innerText()).toContain('with the account key');
    // `Remove` is a link to its confirmation page now (DESIGN §26: destructive actions ask first).
    expect(await page.getByRole('link', { name: 'Remove passkey 1' }).count()).toBe(1);

    await Promise.all([page.waitForURL(`${t.base}/console/login`), page.getByRole('button', { name: 'Sign out', exact: true }).click()]);
    await signInWithPasskey(page, t.base);
    expect(await page.locator('h1').innerText()).toBe('Overview');
    expect(await page.locator('main').innerText()).toContain('5.00 USD');
  });

  it('adds a passkey in a passkey session after confirming with an existing passkey', async () => {
    const { context, page } = await newPage();
    const phone = await addVirtualAuthenticator(context, page);
    await signUpWithPasskey(page, t.base, 'Grace');
    await page.goto(`${t.base}/console/security`);
    expect(await page.getByLabel('Account key').count()).toBe(0);
    await page.getByLabel('Passkey name').fill('Laptop');
    // The phone confirms (the proof); then the new passkey is made on another device: the page's
    // authenticator is swapped once the proof is sent (Chromium takes one such device at a time).
    const made: string[] = [];
    await page.route('**/console/security/passkeys/options', async (route) => {
      const { credentials } = (await phone.cdp.send('WebAuthn.getCredentials', { authenticatorId: phone.authenticatorId })) as {
        credentials: { credentialId: string }[];
      };
      made.push(...credentials.map((c) => c.credentialId));
      await phone.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: phone.authenticatorId });
      await addVirtualAuthenticator(context, page);
      await route.continue();
    });
    await Promise.all([
      page.waitForURL(`${t.base}/console/security?done=added`),
      page.getByRole('button', { name: 'Add a passkey' }).click(),
    ]);
    expect(made).toHaveLength(1);
    const items = page.locator('ul.items > li');
    expect(await items.count()).toBe(2);
    const text = await page.locator('main').innerText();
    expect(text).toContain('Laptop');
    expect(text).toContain('with the passkey Grace');
  });

  it('meets the quality bars on the sign-in, sign-up and Security pages', async () => {
    const { context, page } = await newPage();
    await page.goto(`${t.base}/console/login`);
    await expectQualityBars(page, 'login');
    await page.goto(`${t.base}/console/signup`);
    await expectQualityBars(page, 'signup');
    await addVirtualAuthenticator(context, page);
    await signUpWithPasskey(page, t.base);
    await page.goto(`${t.base}/console/security`);
    expect(await page.locator('ul.items > li').count()).toBe(1);
    await expectQualityBars(page, 'security');
    await page.goto(`${t.base}/console/approvals`);
    await expectQualityBars(page, 'approvals-empty');
    await page.goto(`${t.base}/console`);
    await expectQualityBars(page, 'overview-empty');
  });
});

describe('the consent and approval pages with the console', () => {
  const ask = async (agentKey: string) => {
    const res = await t.call<{ id: string; consentUrl: string }>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agentKey, 'idempotency-key': `console-consent-${Date.now()}-${Math.random()}` },
      body: { currency: 'USD', limits: { perCharge: 5 }, description: 'lookups' },
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const grantRequest = async (agentKey: string, id: string) =>
    (await t.call<{ status: string }>('GET', `/api/v1/agents/grant-requests/${id}`, { headers: { 'x-agent-key': agentKey } })).body;

  it('lets a signed-in payer allow without a key, and a signed-out one sign in and come back', async () => {
    const agent = await t.enabledAgent(`consent-bot-${Date.now()}`);
    const user = await t.fundedUser({ USD: 10 });
    const context = await browser.newContext();
    const page = await context.newPage();

    // Signed out: the key field, and a way to sign in that comes back to the same request.
    const first = await ask(agent.key);
    await page.goto(first.consentUrl);
    expect(await page.locator('input[name="accountKey"]').count()).toBe(1);
    await Promise.all([page.waitForURL(/\/console\/login\?next=/), page.getByRole('link', { name: 'Sign in with a passkey' }).click()]);
    await page.getByLabel('Account key').fill(user.key);
    await Promise.all([page.waitForURL(first.consentUrl), page.getByRole('button', { name: 'Sign in with account key' }).click()]);

    // Signed in: no key field; Allow makes the grant on the session's account.
    expect(await page.locator('input[name="accountKey"]').count()).toBe(0);
    await expectQualityBars(page, 'consent-signed-in');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Allow' }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Allowed');
    expect((await grantRequest(agent.key, first.id)).status).toBe('claimed');
    const grants = await t.call<{ data: unknown[] }>('GET', '/api/v1/users/me/grants', { headers: { 'x-user-key': user.key } });
    expect(grants.body.data).toHaveLength(1);
  });

  it('names the service on the approval page and says the amount is held', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 50 });
    await t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': user.key }, body: { approvalAbove: { USD: 1 } } });
    const charge = await t.call<{ approvalUrl: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `console-held-${Date.now()}` },
      raw: '{"amount":5,"currency":"USD","description":"held"}',
    });
    const page = await (await browser.newContext()).newPage();
    await page.goto(charge.body.approvalUrl);
    const text = await page.locator('main').innerText();
    expect(text).toContain('Agent Payment Service');
    expect(text).toContain('already held from your balance');
    await expectQualityBars(page, 'approval-page');
  });
});
