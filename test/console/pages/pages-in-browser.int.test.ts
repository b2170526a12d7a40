/**
 * The pages in a real browser (the packaged Chromium), each page's markup in the console's own
 * layout and stylesheet, at 375 px — no sideways scroll, of the page or inside a table's box (a
 * table's rows are cards there), no `serious` or `critical` axe-core violation — and at 1280 px,
 * where a table is a table. Screenshots go to $CONSOLE_SCREENSHOTS when set.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CONSOLE_CSS, CONSOLE_CSS_PATH, consoleDocument } from '../../../functions/console/layout';
import type { ConsoleResult } from '../../../functions/console/page';
import { captureCharge, refundCharge } from '../../support/answers';
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
  return consoleDocument({ title: result.title, body: result.body, signedIn: { csrfToken: 'csrf', nav: result.nav } });
}

/** Tables whose own box scrolls sideways (its content wider than it), and tables not shown as tables. */
const TABLES = `Array.from(document.querySelectorAll('.table-wrap')).map((box) => ({
  scrolls: box.scrollWidth > box.clientWidth,
  table: getComputedStyle(box.querySelector('table')).display === 'table',
}))`;

async function check(name: string, result: ConsoleResult) {
  const markup = shell(result);
  const out: { width: number; violations: string[]; tables: string[] } = { width: 0, violations: [], tables: [] };
  // One context and page for the whole run: the packaged Chromium runs single-process, and closing
  // its last context ends it.
  const page = await tab();
  await page.unrouteAll();
  await page.route('http://console.test/**', (route) =>
    route.request().url().endsWith(CONSOLE_CSS_PATH)
      ? route.fulfill({ status: 200, contentType: 'text/css', body: CONSOLE_CSS })
      : route.fulfill({ status: 200, contentType: 'text/html', body: markup }),
  );
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto('http://console.test/page');
    const tables = (await page.evaluate(TABLES)) as { scrolls: boolean; table: boolean }[];
    for (const [i, t] of tables.entries()) {
      if (t.scrolls) out.tables.push(`table ${i + 1} scrolls sideways at ${width} px`);
      // A phone shows each row as a card; a desk shows the table.
      if (t.table !== (width === 1280)) out.tables.push(`table ${i + 1} ${t.table ? 'is' : 'is not'} a table at ${width} px`);
    }
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

/** A charge's id from its answer (a stored answer comes back as its raw JSON). */
const idOf = (result: { body?: unknown; rawBody?: string }) => ((result.body ?? JSON.parse(result.rawBody ?? '{}')) as { id: string }).id;

async function busyPayer(): Promise<Payer> {
  const payer = await newPayer('America/New_York');
  await credit(payer, '100', 'USD');
  const agent = await newAgent('Weather Bot with a rather long name for a small screen');
  const other = await newAgent('Travel Agent');
  for (let i = 0; i < 3; i++) await charge(agent, payer, '1.25', 'USD', `forecast for city number ${i} with some more words`);
  await charge(other, payer, '500', 'USD', 'flight booking');
  const ref = { id: agent.id, keyHash: agent.keyHash, name: agent.name };
  const paid = await charge(
    agent,
    payer,
    '12.50',
    'USD',
    'A very long description: seven-day forecasts for Lisbon, Porto, Faro and Coimbra, hourly, with the wind and the tides',
  );
  const refunded = await refundCharge({ agent: ref, chargeId: idOf(paid), idempotencyKey: randomUUID(), amount: '4.50', baseUrl: '' });
  const held = await charge(agent, payer, '3', 'USD', 'held until the booking is confirmed', { capture: false });
  const captured = await charge(agent, payer, '2', 'USD', 'captured hold', { capture: false });
  const capture = await captureCharge({ agent: ref, chargeId: idOf(captured), idempotencyKey: randomUUID(), amount: '1.50', baseUrl: '' });
  expect([refunded.statusCode, held.statusCode, capture.statusCode]).toEqual([200, 201, 200]);
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
  for (const amount of ['25', '1000.50']) {
    await post(payer, '/console/funds/usdc', {
      amount,
      idempotencyKey: onceKeyOf(bodyOf(await get(payer, '/console/funds')), '/console/funds/usdc'),
    });
  }
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
      // The Statement in Activity's place (DESIGN §26; /console/activity redirects to it).
      for (const path of ['/console/funds', '/console/statement', '/console/grants', '/console/limits', '/console/developers']) {
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
      const { width, violations, tables } = await check(name, result);
      if (width > 375) problems.push(`${name}: scrollWidth ${width} at 375 px`);
      for (const v of [...violations, ...tables]) problems.push(`${name}: ${v}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
