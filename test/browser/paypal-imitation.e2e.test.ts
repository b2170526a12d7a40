/**
 * The PayPal imitation's approval page (bin/local/paypal-sandbox.orders.ts) in a real browser, as a
 * payer meets it from a USD top-up: a viewport and no sideways scroll at 375 px, no serious axe-core
 * finding, and PayPal's way back (DESIGN §24): after Approve to the order's return_url with
 * `token=<order id>&PayerID=<payer id>`, after Cancel to its cancel_url with `token`, the URLs' own
 * query kept (PayPal Express Checkout integration guide: "PayPal redirects to the return URL with the
 * token … and the buyer's unique identifier (Payer ID); if the buyer cancels, PayPal redirects to the
 * cancel URL with the token").
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { type PaypalSandbox, startPaypalSandbox } from '../../bin/local/paypal-sandbox';
import { launchBrowser } from '../support/browser';
import { expectQualityBars } from './console';

let sandbox: PaypalSandbox;
let browser: Browser;
let shop: Server;
let shopUrl: string;
let token: string;

beforeAll(async () => {
  sandbox = await startPaypalSandbox();
  token = (
    (await (
      await fetch(`${sandbox.url}/v1/oauth2/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${sandbox.clientId}:${sandbox.clientSecret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      })
    ).json()) as { access_token: string }
  ).access_token;
  // The merchant's pages the payer comes back to.
  shop = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Back at the shop</title><h1>Back at the shop</h1></html>');
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', () => resolve()));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => shop?.close(resolve));
  await sandbox?.stop();
});

/** A 12.50 USD order as the service creates one (rails/paypal.orders.ts); its payer's approval link. */
async function order(context?: { return_url: string; cancel_url: string }): Promise<{ id: string; approve: string }> {
  const res = await fetch(`${sandbox.url}/v2/checkout/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      intent: 'CAPTURE',
      purchase_units: [{ reference_id: 'topup-1', amount: { currency_code: 'USD', value: '12.50' } }],
      ...(context ? { payment_source: { paypal: { experience_context: { ...context, user_action: 'PAY_NOW' } } } } : {}),
    }),
  });
  const body = (await res.json()) as { id: string; links: { rel: string; href: string }[] };
  const approve = body.links.find((l) => l.rel === 'payer-action' || l.rel === 'approve')?.href;
  if (!approve) throw new Error('no approval link');
  return { id: body.id, approve };
}

describe("the PayPal imitation's approval page", () => {
  it('fits a phone (viewport, no sideways scroll at 375 px) with no serious axe-core finding', async () => {
    const { approve } = await order();
    const page = await (await browser.newContext()).newPage();
    await page.goto(approve);
    expect(await page.locator('meta[name="viewport"]').getAttribute('content')).toBe('width=device-width, initial-scale=1');
    await expectQualityBars(page, 'paypal-imitation');
  });

  it('sends the payer back to return_url with token and PayerID after Approve, as PayPal does', async () => {
    const { id, approve } = await order({ return_url: `${shopUrl}/topup/done?from=paypal`, cancel_url: `${shopUrl}/topup/cancelled` });
    const page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
    await page.goto(approve);
    await Promise.all([page.waitForURL(`${shopUrl}/**`), page.getByRole('button', { name: 'Approve', exact: true }).click()]);
    const back = new URL(page.url());
    const payerId = sandbox.order(id)?.payerId;
    expect(payerId).toMatch(/^[A-Z0-9]{13}$/);
    expect([back.pathname, Object.fromEntries(back.searchParams)]).toEqual([
      '/topup/done',
      { from: 'paypal', token: id, PayerID: payerId },
    ]);
    expect(sandbox.order(id)?.status).toBe('APPROVED');
    // The order shows its payer, as PayPal's does once approved.
    const shown = (await (
      await fetch(`${sandbox.url}/v2/checkout/orders/${id}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as {
      payer?: { payer_id: string };
    };
    expect(shown.payer).toEqual({ payer_id: payerId });
  });

  it('sends the payer to cancel_url with token after Cancel, and the order is not approved', async () => {
    const { id, approve } = await order({ return_url: `${shopUrl}/topup/done`, cancel_url: `${shopUrl}/topup/cancelled` });
    const page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
    await page.goto(approve);
    await Promise.all([page.waitForURL(`${shopUrl}/**`), page.getByRole('button', { name: 'Cancel' }).click()]);
    const back = new URL(page.url());
    expect([back.pathname, Object.fromEntries(back.searchParams)]).toEqual(['/topup/cancelled', { token: id }]);
    expect(sandbox.order(id)?.status).not.toBe('APPROVED');
  });

  it('without a return_url, shows the order approved on its own page', async () => {
    const { id, approve } = await order();
    const page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
    await page.goto(approve);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Approve', exact: true }).click()]);
    expect(await page.locator('main').innerText()).toContain(`Order ${id} for 12.5 USD: APPROVED`);
  });
});
