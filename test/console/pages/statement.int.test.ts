/**
 * The Statement (DESIGN §26) against DynamoDB Local: every movement of the payer's balance newest
 * first, with its type, counterparty, signed amount (`+10.00 USD`, `−1.50 USD`) and the balance
 * after it; an empty state that says what to do next; filters (currency, type, agent, dates, text)
 * as query parameters; `Next page`; `Download CSV` with the exact header, every filtered row,
 * amounts as plain signed decimals and the cells an agent writes guarded; refusals as 400.
 */

import { randomUUID } from 'node:crypto';
import { compactVerify, createLocalJWKSet } from 'jose';
import { LosslessNumber } from 'lossless-json';
import { overviewPage } from '../../../functions/console/own/overview.page';
import { STATEMENT_CSV_HEADER } from '../../../functions/console/pages/statement';
import { mayHoldOpenTab, noReceiptYet, TAB_HOLD_MAX_AGE_MS } from '../../../functions/console/pages/statement-facts';
import { openTabSchema, tabUsageSchema } from '../../../functions/contracts/tab.schemas';
import { validate } from '../../../functions/contracts/validation';
import { hashKey } from '../../../functions/core/keys';
import { receiptKeySet } from '../../../functions/use-cases/receipts/receipts';
import { openTab, useTab } from '../../../functions/use-cases/tabs/tabs';
import { captureCharge, releaseCharge } from '../../support/answers';
import { bodyOf, charge, consolePagesEnv, credit, get, newAgent, newPayer, statusOf } from './support';

consolePagesEnv();

function csvOf(result: Awaited<ReturnType<typeof get>>) {
  if (result.kind !== 'download') throw new Error(`expected a download, got ${result.kind}`);
  return result;
}

/** The rows of the statement's table, as text: one string per row, cells joined by `|`. */
const rowsOf = (markup: string): string[] =>
  (markup.split('<tbody>')[1]?.split('</tbody>')[0] ?? '')
    .split('<tr>')
    .slice(1)
    .map((row) =>
      row
        .split('</td>')
        .slice(0, -1)
        .map((cell) => cell.replace(/<[^>]+>/g, '').trim())
        .join('|'),
    );

describe('Statement', () => {
  it('says what to do next when nothing has moved the balance', async () => {
    const payer = await newPayer();
    const markup = bodyOf(await get(payer, '/console/statement'));
    expect(markup).toContain('Nothing has moved your balance yet.');
    expect(markup).toContain('<a class="button primary" href="/console/funds">Add funds</a>');
    // No filters over nothing: they come with the first movement.
    expect(markup).not.toContain('>Download CSV</a>');
    await credit(payer, '1', 'USD');
    const first = bodyOf(await get(payer, '/console/statement'));
    expect(first).toContain('>Download CSV</a>');
    for (const label of ['Currency', 'Type', 'Agent', 'From', 'To', 'Search']) expect(first).toContain(`>${label}</label>`);
  });

  it('lists every movement newest first with its signed amount and the balance after it, in the session’s zone', async () => {
    const payer = await newPayer('Europe/Berlin');
    await credit(payer, '10', 'USD');
    const bot = await newAgent('Alpha Bot');
    await charge(bot, payer, '1.5', 'USD', 'first lookup');
    await charge(bot, payer, '2', 'USD', 'second lookup');
    const markup = bodyOf(await get(payer, '/console/statement'));
    const rows = rowsOf(markup);
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/\|Charge\|Alpha Bot\|second lookup\|\u22122\.00 USD\|6\.50 USD\|Receipt of Charge c[0-9a-z]+$/);
    expect(rows[1]).toMatch(/\|Charge\|Alpha Bot\|first lookup\|\u22121\.50 USD\|8\.50 USD\|Receipt of Charge c[0-9a-z]+$/);
    expect(rows[2]).toMatch(/\|Credit\|.*\|\+10\.00 USD\|10\.00 USD\|—$/);
    // The browser gave its zone: the times are in it, and no note (DESIGN §26: the note only says when times are in UTC for want of one).
    expectTimesIn(markup, 'Europe/Berlin');
    expect(markup).not.toContain('Times are shown in');
  });

  it('filters by currency, type, agent, text and dates; pages with Next page; downloads every column of the filtered rows', async () => {
    const payer = await newPayer();
    await credit(payer, '100', 'USD');
    await credit(payer, '100', 'USDC');
    const a = await newAgent('Agent A');
    const b = await newAgent('Agent B');
    for (let i = 0; i < 27; i++) await charge(a, payer, '1', 'USD', `a-usd-${i}`);
    await charge(a, payer, '2', 'USDC', 'a-usdc');
    await charge(b, payer, '3', 'USD', '=1+1 b-usd');

    const byAgent = rowsOf(bodyOf(await get(payer, `/console/statement?agent=${b.id}`)));
    expect(byAgent).toHaveLength(1);
    expect(byAgent[0]).toContain('b-usd');
    const usdc = rowsOf(bodyOf(await get(payer, '/console/statement?currency=USDC')));
    expect(usdc.map((r) => r.split('|').slice(1, 2)[0])).toEqual(['Charge', 'Credit']);
    expect(usdc[0]).toMatch(/\u22122\.00 USDC\|98\.00 USDC\|Receipt of Charge c[0-9a-z]+$/);
    expect(rowsOf(bodyOf(await get(payer, '/console/statement?type=credit')))).toHaveLength(2);
    expect(rowsOf(bodyOf(await get(payer, '/console/statement?q=A-USDC')))).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10);
    expect(rowsOf(bodyOf(await get(payer, `/console/statement?to=2000-01-01`)))).toHaveLength(0);
    expect(rowsOf(bodyOf(await get(payer, `/console/statement?from=${today}&to=${today}&currency=USDC`)))).toHaveLength(2);

    // 27 charges of A in USD: a first page of 25 and a Next page link carrying the filters.
    const first = bodyOf(await get(payer, `/console/statement?agent=${a.id}&currency=USD`));
    expect(rowsOf(first)).toHaveLength(25);
    const next = /href="([^"]+)" rel="next">Next page</.exec(first)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toContain(`agent=${a.id}`);
    expect(next).toContain('currency=USD');
    const second = rowsOf(bodyOf(await get(payer, next ?? '')));
    expect(second).toHaveLength(2);
    expect(second[1]).toMatch(/\|a-usd-0\|\u22121\.00 USD\|99\.00 USD\|Receipt of Charge c[0-9a-z]+$/);

    const csv = csvOf(await get(payer, `/console/statement/csv?currency=USD`));
    expect(csv.contentType).toMatch(/^text\/csv/);
    expect(csv.filename).toMatch(/^statement-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,createdAt,type,counterparty,description,amount,currency,balanceAfter,status,grantId,reference');
    expect(lines[0]).toBe(STATEMENT_CSV_HEADER.join(','));
    expect(lines).toHaveLength(1 + 29);
    // Amounts are numbers a spreadsheet sums (never guarded); what the agent wrote is guarded.
    expect(lines[1]).toMatch(/^st[0-9a-z]{26},\d{4}-\d{2}-\d{2}T[^,]+Z,charge,Agent B,'=1\+1 b-usd,-3\.00,USD,70\.00,SUCCESS,,c[0-9a-z]+$/);
    expect(lines[29]).toMatch(/^st[0-9a-z]{26},[^,]+,credit,[^,]*,[^,]*,100\.00,USD,100\.00,/);
  });

  it('refuses a filter that is none (400) with the filters again', async () => {
    const payer = await newPayer();
    const refused = await get(payer, '/console/statement?from=2026-02-30');
    expect(statusOf(refused)).toBe(400);
    expect(bodyOf(refused)).toContain('From');
    expect(bodyOf(refused)).toContain('value="2026-02-30"');
    expect(statusOf(await get(payer, '/console/statement?agent=bob'))).toBe(400);
    expect(statusOf(await get(payer, '/console/statement?type=gift'))).toBe(400);
    expect(statusOf(await get(payer, '/console/statement/csv?currency=EUR'))).toBe(400);
    expect(statusOf(await get(payer, '/console/statement?cursor=garbage'))).toBe(400);
  });
});

/** Each `<time>`'s text is its instant written in `zone` ("27 Nov 2026, 10:45"), as the console writes times. */
function expectTimesIn(markup: string, zone: string): void {
  const times = [...markup.matchAll(/<time datetime="([^"]+)">([^<]+)<\/time>/g)];
  expect(times.length).toBeGreaterThan(0);
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
  for (const [, iso, text] of times) expect(text).toBe(format.format(new Date(iso ?? '')));
}

describe('A row’s receipt (DESIGN §27)', () => {
  it('is linked from the Statement and shown to its payer, verifiable with the published keys; another payer finds none', async () => {
    const payer = await newPayer();
    await credit(payer, '10', 'USD');
    const bot = await newAgent('Receipt Bot');
    await charge(bot, payer, '1.25', 'USD', 'a receipt please');
    const markup = bodyOf(await get(payer, '/console/statement'));
    const href = /href="(\/console\/receipts\/[^"]+)">Receipt/.exec(markup)?.[1];
    expect(href).toMatch(/^\/console\/receipts\/c[0-9a-z]+$/);
    const page = bodyOf(await get(payer, href ?? ''));
    expect(page).toContain('1.25 USD');
    expect(page).toContain('<dt>What</dt><dd>Charge</dd>');
    const jws = /<textarea id="receipt-jws"[^>]*>([^<]+)<\/textarea>/.exec(page)?.[1] ?? '';
    const { payload } = await compactVerify(jws, createLocalJWKSet(await receiptKeySet()));
    expect(JSON.parse(new TextDecoder().decode(payload))).toMatchObject({ v: 1, type: 'charge', amount: '1.25', currency: 'USD' });
    // Another payer: the same 404 as an unknown id (no page says the receipt exists).
    const stranger = await newPayer();
    expect(statusOf(await get(stranger, href ?? ''))).toBe(404);
    expect(statusOf(await get(payer, '/console/receipts/c01unknown'))).toBe(404);
  });
});

const idOf = (result: { body?: unknown; rawBody?: string }) => ((result.body ?? JSON.parse(result.rawBody ?? '{}')) as { id: string }).id;
/** The Agent filter's options, as `label=value`. */
const agentOptionsOf = (markup: string): string[] =>
  [...(markup.split('id="s-agent"')[1]?.split('</select>')[0] ?? '').matchAll(/<option value="([^"]*)"( selected)?>([^<]*)</g)].map(
    ([, value, selected, label]) => `${label}=${value}${selected ? ' (selected)' : ''}`,
  );

describe('What the Statement knows from its own rows (no read of its own)', () => {
  it('a hold given back whole, or an open tab’s, shows — for its receipt; one captured in part, or still held, links it', async () => {
    const payer = await newPayer();
    await credit(payer, '50', 'USD');
    const bot = await newAgent('Hold Bot');
    const ref = { id: bot.id, keyHash: bot.keyHash, name: bot.name };
    const released = await charge(bot, payer, '3', 'USD', 'released whole', { capture: false });
    expect((await releaseCharge({ agent: ref, chargeId: idOf(released), idempotencyKey: randomUUID() })).statusCode).toBe(200);
    const part = await charge(bot, payer, '2', 'USD', 'captured in part', { capture: false });
    expect(
      (await captureCharge({ agent: ref, chargeId: idOf(part), idempotencyKey: randomUUID(), amount: '1.50', baseUrl: '' })).statusCode,
    ).toBe(200);
    expect((await charge(bot, payer, '4', 'USD', 'still held', { capture: false })).statusCode).toBe(201);
    const tab = await openTab({
      ...validate(openTabSchema, { currency: 'USD', limit: new LosslessNumber('5'), description: 'a tab still open' }),
      agent: bot,
      userId: payer.userId,
      userKeyHash: hashKey(payer.userKey),
      idempotencyKey: randomUUID(),
      baseUrl: 'http://localhost:3000',
    });
    expect(tab).toBeDefined();
    // The statement's own table (the open tabs' comes first).
    const rows = rowsOf(bodyOf(await get(payer, '/console/statement')).split('<table class="statement">')[1] ?? '');
    const holdOf = (description: string) => rows.find((r) => r.includes('|Hold|') && r.includes(`|${description}|`)) ?? '';
    expect(holdOf('released whole')).toMatch(/\|—$/);
    expect(holdOf('a tab still open')).toMatch(/\|—$/);
    expect(holdOf('captured in part')).toMatch(/\|Receipt of Hold c[0-9a-z]+$/);
    expect(holdOf('still held')).toMatch(/\|Receipt of Hold c[0-9a-z]+$/);
    // Filtered, the release is not on the page: the page does not know, the link stays.
    const holds = rowsOf(bodyOf(await get(payer, '/console/statement?type=hold')));
    expect(holds.find((r) => r.includes('|released whole|'))).toMatch(/\|Receipt of Hold c[0-9a-z]+$/);
  });

  it('reads the open tabs only where the rows of the whole statement’s first page cannot rule an open tab out', () => {
    const now = new Date('2026-11-29T12:00:00.000Z');
    const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
    const row = (type: string, reference: string, createdAt: string) =>
      ({ type, reference, createdAt, amount: type === 'hold' ? '-2' : '2', currency: 'USD' }) as unknown as Parameters<
        typeof mayHoldOpenTab
      >[0]['data'][number];
    const charge = row('charge', 'c1', ago(60_000));
    const hold = row('hold', 'c2', ago(120_000));
    const release = row('hold_release', 'c2', ago(60_000));
    // The whole statement on the page.
    expect(mayHoldOpenTab({ data: [charge], nextCursor: null }, now)).toBe(false);
    expect(mayHoldOpenTab({ data: [release, hold], nextCursor: null }, now)).toBe(false);
    expect(mayHoldOpenTab({ data: [charge, hold], nextCursor: null }, now)).toBe(true);
    // More pages: an open tab's hold may be on one, unless the page reaches back past the oldest it can be.
    expect(mayHoldOpenTab({ data: [release, hold], nextCursor: 'next' }, now)).toBe(true);
    const old = row('charge', 'c3', ago(TAB_HOLD_MAX_AGE_MS + 60_000));
    expect(mayHoldOpenTab({ data: [release, hold, old], nextCursor: 'next' }, now)).toBe(false);
    expect(mayHoldOpenTab({ data: [row('hold', 'c4', ago(1000)), old], nextCursor: 'next' }, now)).toBe(true);
  });

  it('knows an x402 purchase released whole has no receipt, as a hold: the chain never took it', () => {
    const row = (type: string, reference: string, amount: string) =>
      ({ type, reference, amount, currency: 'USD', createdAt: '2026-11-29T12:00:00.000Z' }) as unknown as Parameters<
        typeof noReceiptYet
      >[0][number];
    const none = noReceiptYet([
      row('hold_release', 'xp1', '2.5'),
      row('x402_purchase', 'xp1', '-2.5'),
      row('hold_release', 'xp2', '1'),
      row('x402_purchase', 'xp2', '-2.5'),
      row('x402_purchase', 'xp3', '-2.5'),
    ]);
    // Released whole: none. Released in part (captured in part) and still held: the link stays.
    expect([...none]).toEqual(['xp1']);
  });

  it('the Agent filter offers the agents on the page by name, and keeps the one filtered by', async () => {
    const payer = await newPayer();
    await credit(payer, '50', 'USD');
    const alpha = await newAgent('Alpha Filter');
    const beta = await newAgent('Beta Filter');
    await charge(alpha, payer, '1', 'USD', 'from alpha');
    await charge(beta, payer, '1', 'USD', 'from beta');
    const all = bodyOf(await get(payer, '/console/statement'));
    expect(agentOptionsOf(all)).toEqual(['All agents= (selected)', `Alpha Filter=${alpha.id}`, `Beta Filter=${beta.id}`]);
    const byBeta = bodyOf(await get(payer, `/console/statement?agent=${beta.id}`));
    expect(agentOptionsOf(byBeta)).toEqual(['All agents=', `Beta Filter=${beta.id} (selected)`]);
    // An agent with no row in view (here: none at all in USDC) is still the selected option, by its id.
    const none = bodyOf(await get(payer, `/console/statement?agent=${alpha.id}&currency=USDC`));
    expect(agentOptionsOf(none)).toEqual(['All agents=', `${alpha.id}=${alpha.id} (selected)`]);
  });
});

describe('Open tabs on the Statement (DESIGN §29)', () => {
  it('lists each open tab with its agent, what it is for and what it has used of its limit; a closed one goes', async () => {
    const payer = await newPayer();
    await credit(payer, '20', 'USD');
    const bot = await newAgent('Token Meter');
    const opened = (await openTab({
      ...validate(openTabSchema, { currency: 'USD', limit: new LosslessNumber('5'), description: 'summariser tokens' }),
      agent: bot,
      userId: payer.userId,
      userKeyHash: hashKey(payer.userKey),
      idempotencyKey: randomUUID(),
      baseUrl: 'http://localhost:3000',
    })) as { charge?: { tabId?: string } };
    const tabId = opened.charge?.tabId ?? '';
    expect(tabId).toMatch(/^t/);
    await useTab({ ...validate(tabUsageSchema, { amount: new LosslessNumber('1.25') }), agent: bot, tabId, idempotencyKey: randomUUID() });
    const markup = bodyOf(await get(payer, '/console/statement'));
    expect(markup).toContain('<h2 id="tabs-h">Open tabs</h2>');
    const section = markup.split('<h2 id="tabs-h">')[1]?.split('</section>')[0] ?? '';
    expect(section).toContain('Token Meter');
    expect(section).toContain('summariser tokens');
    expect(section).toContain('1.25 USD of 5.00 USD');
    // The Overview says so from the charges it reads anyway (a tab's hold names its tab).
    const overview = await overviewPage(payer.session, {
      method: 'GET',
      path: '/console',
      params: {},
      query: {},
      form: {},
      baseUrl: 'http://localhost:3000',
      now: new Date(),
    });
    expect(bodyOf(overview)).toContain('1 open tab holds money</a>');
  });
});
