/**
 * DESIGN §26 in the packaged Chromium against the local stack: the Overview's chart of where money
 * went (spend across 30 days and seven agents: five colours and `Others`), Grants (the agent picked
 * by name, spent against each limit as a bar, `Copy` for the key shown once — with script and
 * without), and a form with several problems shown at once. Every page: no sideways scroll at 375
 * px, no serious or critical axe-core finding. `SCREENSHOTS=<folder>` saves each at 375 and 1280 px
 * (docs/console/overview-*.png come from here).
 *
 * The older spend is seeded as charge items written as the store writes them (the console only
 * reads them), dated by their ids' ULID time; so no ledger audit runs after this file.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { useConsoleStack } from '../support/browser-console';
import { expectQualityBars, signInWithAccountKey } from './console';

// A browser per test (the fixture's default: the packaged Chromium runs single-process).
const { t, browser } = useConsoleStack();

const NAMES = ['Weather Bot', 'Research Assistant', 'Flight Finder', 'News Digest', 'Translator', 'Map Tiles', 'Spell Checker'];
const DAY = 86_400_000;

/** A SUCCESS charge `daysAgo` days back, as the store writes one (the id's ULID carries its time). */
async function seedCharge(userId: string, agent: { id: string; name: string }, amount: number, daysAgo: number, n: number) {
  const at = Date.now() - daysAgo * DAY - n * 60_000;
  const id = `c${encodeTime(at, 10).toLowerCase()}${String(n).padStart(16, '0')}${agent.id}`;
  await db().send(
    new PutCommand({
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.charge(agent.id, id),
        ...keys.userChargeIndex(userId, id),
        type: 'Charge',
        id,
        agentId: agent.id,
        agentName: agent.name,
        userId,
        idempotencyKey: `seed-${n}`,
        amount,
        currency: 'USD',
        description: `seeded ${n}`,
        status: 'SUCCESS',
        createdAt: new Date(at).toISOString(),
      },
    }),
  );
}

const SCROLL = '({ page: document.documentElement.scrollWidth, view: window.innerWidth })';

describe('DESIGN §26 in a browser', () => {
  it('Overview: a chart of 30 days stacked by the top five agents and Others, a legend, the numbers as a table, the months', async () => {
    const user = await t.fundedUser({ USD: 1000 });
    const agents = [];
    for (const name of NAMES) {
      const a = await t.enabledAgent(name);
      agents.push({ ...a, name });
    }
    // Today: a real charge by each agent, through the API.
    for (const [i, a] of agents.entries()) {
      const res = await t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': a.key, 'x-user-key': user.key, 'idempotency-key': `ov-${i}-${Date.now()}` },
        raw: `{"amount":${(i + 1) * 1.25},"currency":"USD","description":"today"}`,
      });
      expect(res.status).toBe(201);
    }
    // The month before: seeded spend on most days, by all seven, the first ones most.
    let n = 0;
    for (let day = 1; day <= 45; day++) {
      for (const [i, a] of agents.entries()) {
        if ((day * 7 + i * 3) % 5 < 2) continue;
        n += 1;
        await seedCharge(user.id, a, 150 + ((day * 37 + i * 101) % 900) + (6 - i) * 120, day, n);
      }
    }
    const context = await browser.newContext({ timezoneId: 'Europe/Lisbon' });
    const page = await context.newPage();
    await signInWithAccountKey(page, t.base, user.key);
    // Again: the console's script has now told the console the zone.
    await page.goto(`${t.base}/console`);
    const chart = page.getByRole('img', { name: /Spend per day in USD/ });
    await chart.waitFor();
    expect(await page.locator('#spend-usd rect').count()).toBeGreaterThan(30);
    const legend = await page.getByRole('list', { name: 'Agents in the USD chart' }).innerText();
    for (const name of NAMES.slice(0, 5)) expect(legend).toContain(name);
    expect(legend).toContain('Others (2 agents)');
    expect(await page.locator('main').innerText()).toMatch(/This month\s+[\d.]+ USD/);
    expect(await page.locator('main').innerText()).not.toContain('Times are shown in');
    // The table of the same numbers, opened.
    await page.getByText('The numbers as a table').click();
    const table = page.getByRole('region', { name: 'Spend per day in USD' });
    expect(await table.locator('tbody tr').count()).toBeGreaterThan(20);
    await page.getByText('The numbers as a table').click();
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      const box = await chart.boundingBox();
      const card = await page.locator('#spend-usd').boundingBox();
      expect(box && card && box.x + box.width <= card.x + card.width).toBe(true);
    }
    await expectQualityBars(page, 'overview');
  }, 180_000);

  it('Grants: the agent found by name, bars of spent against limits, Copy with and without script; every problem of a form at once', async () => {
    const user = await t.fundedUser({ USD: 100 });
    const agent = await t.enabledAgent('Picker Bot');
    const charged = await t.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `pick-${Date.now()}` },
      raw: '{"amount":2,"currency":"USD","description":"first"}',
    });
    expect(charged.status).toBe(201);
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.base });
    const page = await context.newPage();
    await signInWithAccountKey(page, t.base, user.key, '/console/grants');

    // Every problem at once, each beside its field, the values kept.
    await page.getByLabel('Agent ID').fill('nobody');
    await page.getByLabel('Per charge').fill('ten');
    await page.getByLabel('Expires after (days)').fill('0');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create grant' }).click()]);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('3 problems');
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(3);
    expect(await page.getByLabel('Per charge').inputValue()).toBe('ten');
    expect(await page.getByLabel('Per charge').getAttribute('aria-describedby')).toBe('g-perCharge-error g-perCharge-hint');
    await expectQualityBars(page, 'grants-problems');

    // The agent by its name (the datalist offers it; the name typed whole picks it), limits, the key once.
    await page.goto(`${t.base}/console/grants`);
    expect(await page.locator('#g-agents option').evaluateAll((options) => options.map((o) => o.textContent))).toEqual(['Picker Bot']);
    await page.getByLabel('Agent ID').fill('Picker Bot');
    await page.getByLabel('Daily').fill('10');
    await page.getByLabel('Total').fill('20');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create grant' }).click()]);
    await page.getByRole('heading', { name: 'Grant created' }).waitFor();
    const key = (await page.getByLabel('Grant key').inputValue()).trim();
    expect(key).toMatch(/^ug_live_/);
    const copy = page.getByRole('button', { name: 'Copy the grant key' });
    await copy.click();
    // The clipboard write is asynchronous: the status is set when it resolves, so wait for it.
    await page.waitForFunction("document.getElementById('grant-key-copied').textContent !== ''");
    expect(await page.locator('#grant-key-copied').innerText()).toBe('Copied.');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
    await expectQualityBars(page, 'grant-created');

    // The grant spends; its bars show it.
    const spent = await t.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': key, 'idempotency-key': `pick-g-${Date.now()}` },
      raw: '{"amount":8.5,"currency":"USD","description":"with the grant"}',
    });
    expect(spent.status).toBe(201);
    await page.goto(`${t.base}/console/grants`);
    const daily = page.getByRole('meter', { name: /Daily: 8.50 USD of 10.00 USD/ });
    expect(await daily.getAttribute('value')).toBe('850');
    expect(await page.getByRole('meter', { name: /Total: 8.50 USD of 20.00 USD/ }).count()).toBe(1);
    const order = await page.evaluate(
      "[document.getElementById('list-h').compareDocumentPosition(document.getElementById('new-h')) & Node.DOCUMENT_POSITION_FOLLOWING]",
    );
    expect(order).toEqual([4]);
    await expectQualityBars(page, 'grants');

    // Without script: no Copy button, the key selectable text.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const still = await plain.newPage();
    await signInWithAccountKey(still, t.base, user.key, '/console/grants');
    await still.getByLabel('Agent ID').fill(agent.id);
    await Promise.all([still.waitForLoadState('load'), still.getByRole('button', { name: 'Create grant' }).click()]);
    await still.getByRole('heading', { name: 'Grant created' }).waitFor();
    expect(await still.getByRole('button', { name: /Copy/ }).count()).toBe(0);
    expect(await still.getByLabel('Grant key').inputValue()).toMatch(/^ug_live_/);
    await still.setViewportSize({ width: 375, height: 800 });
    const width = (await still.evaluate(SCROLL)) as { page: number; view: number };
    expect(width.page).toBeLessThanOrEqual(width.view);
    // No context is closed: the packaged Chromium runs single-process and ends with one; afterEach closes the browser.
  }, 180_000);
});
