/**
 * `GET /` in a real browser (DESIGN §24: a person who opened the service's address got a JSON 404):
 * a small page, without JavaScript, linking the console, the API's document and /health, each link
 * reaching its page; a viewport for phones, no serious axe-core finding, no sideways scroll at 375 px.
 * Contexts stay open until the browser closes: the packaged single-process Chromium dies when one closes.
 */
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { expectQualityBars } from './console';

let t: TestStack;
let browser: Browser;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.stack.stop();
});

describe('the front page', () => {
  it('links the console, the API document and /health, each of which answers, with no JavaScript', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const response = await page.goto(`${t.stack.url}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()).toMatchObject({ 'content-type': 'text/html; charset=utf-8', 'x-frame-options': 'DENY' });
    expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'none'; /);
    expect(await page.locator('meta[name="viewport"]').getAttribute('content')).toBe('width=device-width, initial-scale=1');
    expect(await page.locator('h1').innerText()).toBe('Agent Payment Service');
    const links = await page.locator('main a').evaluateAll((as) => as.map((a) => [a.textContent, (a as unknown as { href: string }).href]));
    expect(links).toEqual([
      ['The console', `${t.stack.url}/console`],
      ['The API', `${t.stack.url}/api/v1/openapi.json`],
      ['Health', `${t.stack.url}/health`],
    ]);
    for (const [name] of links) {
      await page.goto(`${t.stack.url}/`);
      const [followed] = await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: String(name) }).click()]);
      expect([name, followed?.status()]).toEqual([name, 200]);
    }
  });

  it('has a viewport, no serious axe-core finding and no sideways scroll at 375 px (and 1280 px)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.stack.url}/`);
    await expectQualityBars(page, 'home');
  });

  it('answers curl with the page too; an unknown path stays a JSON 404', async () => {
    const res = await fetch(`${t.stack.url}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<a href="console">');
    const other = await fetch(`${t.stack.url}/nothing-here`);
    expect([other.status, await other.json()]).toEqual([404, { error: 'not found' }]);
  });
});
