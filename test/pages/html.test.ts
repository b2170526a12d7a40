/**
 * The approval page's HTML without a browser: escaping, the headers on every page answer, the
 * CSP's style hash against the style actually sent, and the page's states (docs/approvals.md).
 */
import { createHash } from 'node:crypto';
import type { Charge } from '../../functions/core/charges';
import { escapeHtml, html, SafeHtml } from '../../functions/http/html';
import { htmlErrorResponse, htmlPage, PAGE_HEADERS, seeOther } from '../../functions/http/page';
import { chargePage, displayAmount, invalidLinkPage, pageState, timeLeft } from '../../functions/pages/approval-page.view';

const now = new Date('2025-06-01T12:00:00.000Z');
const pending: Charge = {
  id: 'c01jz0000000000000000000000',
  agentId: 'a01jz0000000000000000000000',
  userId: 'u01jz0000000000000000000000',
  idempotencyKey: 'k1',
  amount: 1500,
  currency: 'USD',
  description: `<script>alert("x")</script> & 'more'`,
  status: 'PENDING',
  createdAt: '2025-06-01T11:59:00.000Z',
  pendingReason: 'user_approval',
  expiresAt: '2025-06-01T12:14:30.000Z',
};
const agent = { name: `<img src=x onerror=alert(1)> "Bob's" agent`, website: 'https://example.com/?a=1&b="2"' };

const bodyOf = (result: { rawBody?: string }) => result.rawBody ?? '';

describe('html', () => {
  it('escapes the five characters that can end text or a quoted attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('escapes every interpolated value except nested html; renders nothing for false, null and undefined', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${'<x>'}${inner}${[html`<br>`, '&']}${false}${null}${undefined}${0}</p>`.text).toBe(
      '<p>&lt;x&gt;<b>&lt;i&gt;</b><br>&amp;0</p>',
    );
    expect(html`${new SafeHtml('<hr>')}`.text).toBe('<hr>');
  });

  it('sends the security headers on every page answer, and the CSP allows exactly the style it sends', () => {
    for (const result of [htmlPage(200, 't', html`x`), invalidLinkPage(), chargePage(pending, agent, now), seeOther('./x')]) {
      expect(result.headers).toMatchObject(PAGE_HEADERS);
    }
    expect(PAGE_HEADERS).toEqual({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': expect.stringMatching(
        /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]{43}='; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
      ),
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    const page = bodyOf(chargePage(pending, agent, now));
    const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1] ?? '');
    expect(styles).toHaveLength(1);
    const hash = createHash('sha256')
      .update(styles[0] ?? '')
      .digest('base64');
    expect(PAGE_HEADERS['content-security-policy']).toContain(`style-src 'sha256-${hash}'`);
    // Nothing else the CSP would have to allow: no scripts, no external anything, no inline styles.
    const plain = bodyOf(chargePage({ ...pending, description: 'data' }, { name: 'Bob', website: 'https://example.com' }, now));
    expect(plain).not.toMatch(/<script|<link|<img|<iframe|\bstyle=|\bsrc=/i);
  });

  it('writes errors as pages with their status, public message and the page headers (and any of the error)', () => {
    const res = htmlErrorResponse(409, 'charge is changing, retry', { 'retry-after': '1' });
    expect(res.statusCode).toBe(409);
    expect(res.headers).toMatchObject({ ...PAGE_HEADERS, 'retry-after': '1' });
    expect(res.body).toContain('<p class="state">charge is changing, retry</p>');
    expect(htmlErrorResponse(500, 'internal error').body).toContain('internal error. Please try again in a moment.');
  });
});

describe('the approval page', () => {
  it('shows the pending charge with every client-given value escaped, and a form that posts to its own URL', () => {
    const page = bodyOf(chargePage(pending, agent, now));
    expect(page).toContain('<h1>Approve this charge?</h1>');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;Bob&#39;s&quot; agent');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;more&#39;');
    expect(page).toContain(
      '<a href="https://example.com/?a=1&amp;b=&quot;2&quot;" rel="noopener noreferrer nofollow">https://example.com/?a=1&amp;b=&quot;2&quot;</a>',
    );
    expect(page).toContain('<dd class="amount">15.00 USD</dd>');
    expect(page).toContain('in 14 minutes (<time datetime="2025-06-01T12:14:30.000Z">2025-06-01 12:14:30 UTC</time>)');
    // No action attribute: the form posts to the page's own URL, so the token is never printed.
    expect(page).toContain('<form method="post">');
    expect(page).not.toContain('action=');
    expect(page.match(/<button type="submit" name="action" value="(approve|decline)">/g)).toHaveLength(2);
  });

  it.each([
    ['approved', { status: 'SUCCESS', pendingReason: undefined }, 'Approved'],
    ['approved, awaiting capture', { pendingReason: 'capture' }, 'Approved'],
    ['declined', { status: 'FAILED', failureReason: 'declined by user' }, 'Declined'],
    ['failed otherwise', { status: 'FAILED', failureReason: 'released' }, 'Not completed'],
    ['expired by the sweeper', { status: 'EXPIRED' }, 'Expired'],
    ['past expiresAt, not yet swept', { expiresAt: now.toISOString() }, 'Expired'],
  ] as const)('shows the final state of a charge %s, without buttons', (_, change, heading) => {
    const page = bodyOf(chargePage({ ...pending, ...change } as Charge, agent, now));
    expect(page).toContain(`<h1>${heading}</h1>`);
    expect(page).toContain('15.00 USD');
    expect(page).not.toContain('<form');
    expect(page).not.toContain('<button');
  });

  it('answers a link that is not valid with 404 and nothing about any charge', () => {
    const result = invalidLinkPage();
    expect(result.statusCode).toBe(404);
    expect(bodyOf(result)).toContain('<h1>This link is not valid</h1>');
  });

  it('says amounts exactly, with at least two decimals', () => {
    expect(displayAmount(1500, 'USD')).toBe('15.00 USD');
    expect(displayAmount(1501, 'USD')).toBe('15.01 USD');
    expect(displayAmount(1, 'USDC')).toBe('0.000001 USDC');
    expect(displayAmount(15_500_000, 'USDC')).toBe('15.50 USDC');
    expect(displayAmount(2 ** 46, 'USD')).toBe('703687441776.64 USD');
  });

  it('says the time left rounded down', () => {
    expect(timeLeft(59_999)).toBe('less than a minute');
    expect(timeLeft(-5)).toBe('less than a minute');
    expect(timeLeft(60_000)).toBe('1 minute');
    expect(timeLeft(899_999)).toBe('14 minutes');
    expect(timeLeft(3_600_000)).toBe('1 hour');
    expect(timeLeft(2 * 3_600_000 + 5 * 60_000)).toBe('2 hours 5 minutes');
    expect(timeLeft(604_800_000)).toBe('7 days');
    expect(timeLeft(604_800_000 - 1)).toBe('6 days 23 hours');
  });

  describe('for an x402 purchase (DESIGN §22): the seller is paid, never the agent', () => {
    const purchase: Charge = {
      ...pending,
      id: 'c01jz0000000000000000000001',
      amount: 2_500_000,
      currency: 'USDC',
      capture: false,
      purchase: {
        requirements: {
          scheme: 'exact',
          network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
          asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
          amount: '2500000',
          payTo: 'SeLLerAddress1111111111111111111111111111111',
          maxTimeoutSeconds: 60,
          extra: { feePayer: 'FeePayer11111111111111111111111111111111111' },
        },
        resource: { url: 'https://seller.example/report?q=<b>', description: 'A weather report' },
      },
    } as Charge;

    it('asks to pay the seller, and names who is paid and for what', () => {
      const page = bodyOf(chargePage(purchase, agent, now));
      expect(page).toContain('<h1>Approve this purchase?</h1>');
      expect(page).toContain('Approve pays the seller, Decline gives it back.');
      expect(page).toContain('<dt>Seller</dt><dd>SeLLerAddress1111111111111111111111111111111</dd>');
      expect(page).toContain('A weather report (https://seller.example/report?q=&lt;b&gt;)');
      expect(page).toContain('<dd class="amount">2.50 USDC</dd>');
      expect(page).not.toMatch(/pays the agent|agent has been paid/);
    });

    it.each([
      ['approved, its payment not yet on chain', { pendingReason: 'capture' }, 'The seller is paid when the payment reaches it'],
      ['paid to the seller', { status: 'SUCCESS', pendingReason: undefined }, 'This purchase was approved and the seller has been paid.'],
      [
        'never taken by the seller',
        { status: 'EXPIRED', failureReason: 'not settled by the seller' },
        'the seller did not take the payment in time',
      ],
      ['declined', { status: 'FAILED', failureReason: 'declined by user' }, 'This purchase was declined. Nothing was paid.'],
      ['not approved in time', { status: 'EXPIRED' }, 'This purchase was not approved in time. Nothing was paid.'],
    ] as const)('says what happened to a purchase %s, never that the agent was paid', (_, change, says) => {
      const page = bodyOf(chargePage({ ...purchase, ...change } as Charge, agent, now));
      expect(page).toContain(says);
      expect(page).not.toMatch(/agent has been paid|pays the agent/);
    });

    it('says why a purchase can no longer be approved', () => {
      const page = bodyOf(chargePage(purchase, agent, now, 'grantRevoked'));
      expect(page).toContain('<h1>This purchase can no longer be approved</h1>');
      expect(page).toContain('This purchase can no longer be approved: you revoked the permission (grant)');
    });

    it('leaves a charge’s words as they were', () => {
      const page = bodyOf(chargePage(pending, agent, now));
      expect(page).toContain('Approve pays the agent, Decline gives it back.');
      expect(page).not.toContain('<dt>Seller</dt>');
      expect(bodyOf(chargePage({ ...pending, status: 'SUCCESS' }, agent, now))).toContain(
        'This charge was approved and the agent has been paid.',
      );
    });
  });

  it('knows a charge is pending only while it is PENDING for approval and before expiresAt', () => {
    expect(pageState(pending, now)).toBe('pending');
    expect(pageState(pending, new Date(pending.expiresAt ?? ''))).toBe('expired');
  });
});
