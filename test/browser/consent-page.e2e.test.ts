/**
 * The consent page in a real browser (docs/grants.md), JavaScript disabled: it shows what the
 * agent asks for, refuses a wrong account key with 400 and changes nothing, and Allow creates the
 * grant the agent then collects.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { auditAfterAll } from '../support/audit';
import { launchBrowser } from '../support/browser';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';

let t: TestStack;
let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
  browser = await launchBrowser();
  context = await browser.newContext({ javaScriptEnabled: false });
});
afterAll(async () => {
  await browser?.close();
  await t?.stack.stop();
});
auditAfterAll();

type GrantRequest = { id: string; status: string; consentUrl: string; grant: null | { key?: string } };

const ask = async (agentKey: string, description: string) => {
  const res = await t.call<GrantRequest>('POST', '/api/v1/agents/grant-requests', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': `browser-${Date.now()}-${Math.random()}` },
    body: { currency: 'USD', limits: { perCharge: 5, total: 20 }, ttlSeconds: 86400, description },
  });
  expect(res.status).toBe(201);
  return res.body;
};

describe('the consent page in a browser', () => {
  it('shows the request, refuses a wrong key, and allows with the account key', async () => {
    const agent = await t.enabledAgent(`<b>bot</b>-${Date.now()}`);
    const user = await t.fundedUser();
    const request = await ask(agent.key, '<script>alert(1)</script> lookups');
    const page = await context.newPage();
    const first = await page.goto(request.consentUrl);
    expect(first?.status()).toBe(200);
    expect(first?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(await page.locator('h1').innerText()).toBe('Give this agent a grant?');
    const text = await page.locator('main').innerText();
    expect(text).toContain(`<b>bot</b>`);
    expect(text).toContain('<script>alert(1)</script> lookups');
    expect(text).toContain('20.00 USD');
    expect(text).toContain('1 day');

    await page.fill('input[name="accountKey"]', 'uk_live_wrong');
    const [refused] = await Promise.all([page.waitForNavigation(), page.click('button[value="allow"]')]);
    expect(refused?.status()).toBe(400);
    expect(await page.locator('main').innerText()).toContain('invalid account key');
    const pending = await t.call<GrantRequest>('GET', `/api/v1/agents/grant-requests/${request.id}`, {
      headers: { 'x-agent-key': agent.key },
    });
    expect(pending.body.status).toBe('pending');

    await page.fill('input[name="accountKey"]', user.key);
    await Promise.all([page.waitForNavigation(), page.click('button[value="allow"]')]);
    expect(await page.locator('h1').innerText()).toBe('Allowed');
    expect(page.url()).toBe(request.consentUrl);
    const claimed = await t.call<GrantRequest>('GET', `/api/v1/agents/grant-requests/${request.id}`, {
      headers: { 'x-agent-key': agent.key },
    });
    expect(claimed.body.status).toBe('claimed');
    expect(claimed.body.grant?.key).toMatch(/^ug_live_/);
  });

  it('fits a phone and a desktop without scrolling sideways, its buttons styled', async () => {
    const agent = await t.enabledAgent(`a-rather-long-agent-name-for-a-narrow-screen-${Date.now()}`);
    const request = await ask(agent.key, 'weather lookups for the whole trip, a description long enough to wrap on a phone');
    const page = await context.newPage();
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      expect((await page.goto(request.consentUrl))?.status()).toBe(200);
      const { scrollWidth, innerWidth } = (await page.evaluate(
        '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
      )) as { scrollWidth: number; innerWidth: number };
      expect({ width, scrollWidth }).toEqual({ width, scrollWidth: innerWidth });
      // The field and both buttons within the page's width; Allow is the primary button, Deny not.
      for (const selector of ['input[name="accountKey"]', 'button[value="allow"]', 'button[value="deny"]']) {
        const box = await page.locator(selector).boundingBox();
        expect({ width, selector, inside: box !== null && box.x >= 0 && box.x + box.width <= innerWidth }).toEqual({
          width,
          selector,
          inside: true,
        });
      }
      const background = (selector: string) =>
        page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).backgroundColor`);
      expect(await background('button[value="allow"]')).toBe('rgb(26, 127, 55)');
      expect(await background('button[value="deny"]')).toBe('rgba(0, 0, 0, 0)');
    }
  });

  it('denies', async () => {
    const agent = await t.enabledAgent();
    const request = await ask(agent.key, 'deny me');
    const page = await context.newPage();
    await page.goto(request.consentUrl);
    await Promise.all([page.waitForNavigation(), page.click('button[value="deny"]')]);
    expect(await page.locator('h1').innerText()).toBe('Denied');
    const res = await t.call<GrantRequest>('GET', `/api/v1/agents/grant-requests/${request.id}`, { headers: { 'x-agent-key': agent.key } });
    expect(res.body).toMatchObject({ status: 'denied', grant: null });
  });
});
