/**
 * The approval page in a real browser (docs/approvals.md): the Chromium shipped in the npm
 * package @sparticuz/chromium (or CHROMIUM_PATH's), driven by playwright-core with JavaScript
 * disabled, against the local stack. The page must work as plain HTML forms, show what is being
 * approved, and end in the same states as the user API.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { auditAfterAll } from '../support/audit';
import { launchBrowser } from '../support/browser';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';

let t: TestStack;
let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack({}, { sweepIntervalMs: 0 });
  browser = await launchBrowser();
  context = await browser.newContext({ javaScriptEnabled: false });
});
afterAll(async () => {
  await browser?.close();
  await t?.stack.stop();
});
auditAfterAll();

type Charge = { id: string; status: string; failureReason: string | null; approvalUrl: string };

/** A user whose policy wants approval above 10 USD, an agent, and a 15 USD charge awaiting it. */
async function pendingCharge(opts: { agentName?: string; description?: string; windowSeconds?: number } = {}) {
  const user = await t.fundedUser({ USD: 50 });
  const agent = await t.enabledAgent(opts.agentName);
  const policy = await t.call('PUT', '/api/v1/users/me/policy', {
    headers: { 'x-user-key': user.key },
    body: { approvalAbove: { USD: 10 }, ...(opts.windowSeconds ? { approvalWindowSeconds: opts.windowSeconds } : {}) },
  });
  expect(policy.status).toBe(200);
  const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `page-${Date.now()}-${Math.random()}` },
    body: { amount: 15, currency: 'USD', description: opts.description ?? 'one month of weather data' },
  });
  expect(res.status).toBe(202);
  return { user, agent, charge: res.body };
}

const agentView = (agentKey: string, id: string) =>
  t.call<Charge>('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': agentKey } });

async function open(url: string): Promise<{ page: Page; status: number; headers: Record<string, string> }> {
  const page = await context.newPage();
  const response = await page.goto(url);
  if (!response) throw new Error(`no response for ${url}`);
  return { page, status: response.status(), headers: response.headers() };
}

const heading = (page: Page) => page.locator('h1').innerText();

/** What the in-page function needs of the browser (the project compiles without the DOM types). */
type BrowserGlobals = { getComputedStyle(el: unknown): { backgroundColor: string } };

describe('the approval page', () => {
  it('shows the agent, amount and description without JavaScript; Approve pays the agent and the link is then spent', async () => {
    const agentName = `<b>Tom & "Jerry"</b> ${Date.now()}`;
    const description = `<script>alert('x')</script> & more`;
    const { agent, charge } = await pendingCharge({ agentName, description });
    const { page, status, headers } = await open(charge.approvalUrl);
    expect(status).toBe(200);
    expect(headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    expect(headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    expect(await heading(page)).toBe('Approve this charge?');
    const text = await page.locator('main').innerText();
    // Shown as the text it is: no element was made of it.
    expect(text).toContain(agentName);
    expect(text).toContain(description);
    expect(await page.locator('main b, main script').count()).toBe(0);
    expect(text).toContain('15.00 USD');
    expect(text).toContain('https://example.com');
    expect(text).toMatch(/Expires\s+in 14 minutes \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/);
    // The inline style ran under the CSP: its hash matched.
    const approve = page.getByRole('button', { name: 'Approve' });
    // (Playwright evaluates in its own world, which runs with the page's JavaScript disabled.)
    const backgroundOf = (el: unknown) => (globalThis as unknown as BrowserGlobals).getComputedStyle(el).backgroundColor;
    expect(await approve.evaluate(backgroundOf)).toBe('rgb(26, 127, 55)');
    // The token appears only in the address bar, not in the page.
    const token = charge.approvalUrl.split('/').pop() ?? '';
    expect(await page.content()).not.toContain(token);

    await approve.click();
    await page.waitForLoadState();
    expect(page.url()).toBe(charge.approvalUrl);
    expect(await heading(page)).toBe('Approved');
    expect(await page.locator('main').innerText()).toContain('15.00 USD');
    expect(await page.locator('button').count()).toBe(0);
    expect((await agentView(agent.key, charge.id)).body.status).toBe('SUCCESS');

    // Spent: a second post (a stale tab) changes nothing and shows the state.
    const again = await fetch(charge.approvalUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=decline',
      redirect: 'manual',
    });
    expect([again.status, again.headers.get('location')]).toEqual([303, `./${token}`]);
    expect((await agentView(agent.key, charge.id)).body.status).toBe('SUCCESS');
    await page.reload();
    expect(await heading(page)).toBe('Approved');
    await page.close();
  });

  it('Decline returns the hold to the user and shows Declined', async () => {
    const { user, agent, charge } = await pendingCharge();
    const { page } = await open(charge.approvalUrl);
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.waitForLoadState();
    expect(await heading(page)).toBe('Declined');
    expect(await page.locator('button').count()).toBe(0);
    expect((await agentView(agent.key, charge.id)).body).toMatchObject({ status: 'FAILED', failureReason: 'declined by user' });
    const me = await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', {
      headers: { 'x-user-key': user.key },
    });
    expect(me.body).toMatchObject({ balances: { USD: 50 }, held: { USD: 0 } });
    await page.close();
  });

  it('loses a race to the user API without harm: Approve on a page opened before the decline shows Declined', async () => {
    const { user, agent, charge } = await pendingCharge();
    const { page } = await open(charge.approvalUrl);
    const declined = await t.call('POST', `/api/v1/users/me/charges/${charge.id}/decline`, { headers: { 'x-user-key': user.key } });
    expect(declined.status).toBe(200);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForLoadState();
    expect(await heading(page)).toBe('Declined');
    expect((await agentView(agent.key, charge.id)).body.status).toBe('FAILED');
    await page.close();
  });

  it('an expired link shows Expired and cannot approve', async () => {
    const { agent, charge } = await pendingCharge({ windowSeconds: 60 });
    const { page } = await open(charge.approvalUrl);
    expect(await page.locator('main').innerText()).toMatch(/Expires\s+in (less than a minute|1 minute) /);
    expect((await expireDueCharges(new Date(Date.now() + 61_000))).expired).toBeGreaterThanOrEqual(1);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForLoadState();
    expect(await heading(page)).toBe('Expired');
    expect(await page.locator('button').count()).toBe(0);
    expect((await agentView(agent.key, charge.id)).body.status).toBe('EXPIRED');
    await page.close();
  });

  it('a forged or malformed link is "not valid" with 404, naming no charge', async () => {
    const { charge } = await pendingCharge();
    const [base = '', token = ''] = charge.approvalUrl.split('/approve/');
    const [chargeId = '', mac = ''] = token.split('.');
    const flipped = `${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    for (const forged of [`${chargeId}.${flipped}`, chargeId, `${chargeId}.`, 'nonsense', `${chargeId}.${mac}.x`]) {
      const { page, status, headers } = await open(`${base}/approve/${forged}`);
      expect({ forged, status }).toEqual({ forged, status: 404 });
      expect(headers['content-security-policy']).toContain("default-src 'none'");
      expect(await heading(page)).toBe('This link is not valid');
      expect(await page.content()).not.toContain(chargeId);
      await page.close();
    }
    // Posting to a forged link moves nothing either.
    const post = await fetch(`${base}/approve/${chargeId}.${flipped}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
    });
    expect(post.status).toBe(404);
    const { page } = await open(charge.approvalUrl);
    expect(await heading(page)).toBe('Approve this charge?');
    await page.close();
  });

  it('refuses a post that is not the form, as a page: 415 for JSON, 400 for an unknown action, 413 when long', async () => {
    const { charge } = await pendingCharge();
    const post = (contentType: string, body: string) =>
      fetch(charge.approvalUrl, { method: 'POST', headers: { 'content-type': contentType }, body, redirect: 'manual' });
    const cases: [string, string, number, string][] = [
      ['application/json', '{"action":"approve"}', 415, 'content-type must be application/x-www-form-urlencoded'],
      ['application/x-www-form-urlencoded', 'action=pay', 400, 'action must be one of approve, decline'],
      ['application/x-www-form-urlencoded', 'action=approve&action=decline', 400, 'action is given more than once'],
      ['application/x-www-form-urlencoded', `action=approve&pad=${'x'.repeat(300)}`, 413, 'request body too large'],
    ];
    for (const [type, body, status, message] of cases) {
      const res = await post(type, body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(await res.text()).toContain(message);
    }
    expect((await t.call<Charge>('GET', `/api/v1/agents/charge/${charge.id}`, { headers: t.admin })).body.status).toBe('PENDING');
  });
});
