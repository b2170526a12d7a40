/**
 * The pages in a real browser (the packaged Chromium), before the framework's layout exists on this
 * branch: each page's markup inside a stand-in shell (the approval page's stylesheet, these pages'
 * PAGES_CSS, a navigation with the exact labels) at 375 px — no sideways scroll, no `serious` or
 * `critical` axe-core violation — and at 1280 px. Screenshots go to $CONSOLE_SCREENSHOTS when set.
 * The framework's browser suite runs the same checks on the real layout.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CONSOLE_NAV, type ConsoleResult } from '../../../functions/console/page';
import { PAGES_CSS } from '../../../functions/console/pages';
import { escapeHtml, PAGE_STYLE } from '../../../functions/pages/html';
import { launchBrowser } from '../../support/browser';
import { bodyOf, charge, consolePagesEnv, credit, get, newAgent, newPayer, onceKeyOf, type Payer, post } from './support';

consolePagesEnv();

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = process.env.CONSOLE_SCREENSHOTS;

let browser: Browser;
let opened: Page | undefined;
const tab = async () => {
  opened ??= await (await browser.newContext()).newPage();
  return opened;
};
beforeAll(async () => {
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

function shell(result: ConsoleResult): string {
  if (result.kind !== 'page') throw new Error(`expected a page, got ${result.kind}`);
  const nav = CONSOLE_NAV.map(
    (n) => `<a href="${n.path}"${n.name === result.nav ? ' aria-current="page"' : ''}>${escapeHtml(n.label)}</a>`,
  ).join(' ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(result.title)}</title><style>${PAGE_STYLE}${PAGES_CSS}</style></head>
<body><header><nav aria-label="Console">${nav} <form method="post" action="/console/logout"><button type="submit">Sign out</button></form></nav></header>
<main><h1>${escapeHtml(result.title)}</h1>${bodyOf(result)}</main></body></html>`;
}

async function check(name: string, result: ConsoleResult) {
  const markup = shell(result);
  const out: { width: number; violations: string[] } = { width: 0, violations: [] };
  // One context and page for the whole run: the packaged Chromium runs single-process, and closing
  // its last context ends it.
  const page = await tab();
  await page.unrouteAll();
  await page.route('http://console.test/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: markup }));
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('http://console.test/page');
    if (width === 375) {
      // Strings, not functions: this project's TypeScript has no DOM types (the code runs in the page).
      out.width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      await page.addScriptTag({ content: AXE });
      const results = (await page.evaluate(
        `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))`,
      )) as { id: string; impact: string; targets: string[] }[];
      out.violations = results
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.targets.join(', ')}`);
    }
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
  return out;
}

async function busyPayer(): Promise<Payer> {
  const payer = await newPayer('America/New_York');
  await credit(payer, '100', 'USD');
  const agent = await newAgent('Weather Bot with a rather long name for a small screen');
  const other = await newAgent('Travel Agent');
  for (let i = 0; i < 3; i++) await charge(agent, payer, '1.25', 'USD', `forecast for city number ${i} with some more words`);
  await charge(other, payer, '500', 'USD', 'flight booking');
  await post(payer, '/console/grants', {
    agentId: agent.id,
    currency: 'USD',
    perCharge: '5',
    daily: '10',
    total: '50',
    approvalAbove: '2',
    expiresAfterDays: '30',
    description: 'weather lookups',
    idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/grants')), '/console/grants'),
  });
  await post(payer, `/console/limits/agents/${other.id}/block`, {});
  await post(payer, '/console/limits', { 'perCharge.USD': '50', 'daily.USD': '200', approvalWindowMinutes: '15' });
  await post(payer, '/console/funds/usdc', {
    amount: '25',
    idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/funds')), '/console/funds/usdc'),
  });
  await post(payer, '/console/developers/webhooks', {
    url: 'http://127.0.0.1:9/hooks/payments/with/a/long/path',
    idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/developers')), '/console/developers/webhooks'),
  });
  return payer;
}

describe('the pages at 375 px and 1280 px', () => {
  it('fit a phone without sideways scroll and have no serious or critical axe violation, empty and busy', async () => {
    const empty = await newPayer();
    const busy = await busyPayer();
    const pages: [string, ConsoleResult][] = [];
    for (const [who, payer] of [
      ['empty', empty],
      ['busy', busy],
    ] as const) {
      for (const path of ['/console/funds', '/console/activity', '/console/grants', '/console/limits', '/console/developers']) {
        pages.push([`${who}-${path.split('/').pop()}`, await get(payer, path)]);
      }
    }
    const topups = bodyOf(await get(busy, '/console/funds'));
    const topup = /href="(\/console\/funds\/topups\/[^"]+)"/.exec(topups)?.[1] ?? '';
    pages.push(['busy-topup', await get(busy, topup)]);
    const grantForm = bodyOf(await get(empty, '/console/grants'));
    pages.push([
      'refused-grant',
      await post(empty, '/console/grants', { agentId: 'nope', currency: 'USD', idempotencyKey: onceKeyOf(grantForm, '/console/grants') }),
    ]);
    const made = await post(empty, '/console/grants', {
      agentId: (await newAgent()).id,
      currency: 'USD',
      idempotencyKey: onceKeyOf(grantForm, '/console/grants'),
    });
    pages.push(['grant-key', made]);

    const problems: string[] = [];
    for (const [name, result] of pages) {
      const { width, violations } = await check(name, result);
      if (width > 375) problems.push(`${name}: scrollWidth ${width} at 375 px`);
      for (const v of violations) problems.push(`${name}: ${v}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
