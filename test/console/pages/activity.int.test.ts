/**
 * Activity (DESIGN §21) against DynamoDB Local: every charge to the payer newest first, refusals
 * included, amounts with currency and two decimals, times in the session's zone, filters by status,
 * agent and currency as query parameters, `Next page`, and `Download CSV` with the exact header,
 * the filtered rows and CSV escaping.
 */
import { CSV_HEADER } from '../../../functions/console/pages/activity';
import { bodyOf, charge, consolePagesEnv, credit, get, newAgent, newPayer, statusOf } from './support';

consolePagesEnv();

function csvOf(result: Awaited<ReturnType<typeof get>>) {
  if (result.kind !== 'download') throw new Error(`expected a download, got ${result.kind}`);
  return result;
}

describe('Activity', () => {
  it('says what to do next when there is nothing yet', async () => {
    const payer = await newPayer();
    const markup = bodyOf(await get(payer, '/console/activity'));
    expect(markup).toContain('No charges yet.');
    expect(markup).toContain('href="/console/funds"');
    expect(markup).toContain('>Download CSV</a>');
  });

  it('lists every charge newest first with agent, amount, status (refusals too), in the session’s time zone', async () => {
    const payer = await newPayer('Europe/Berlin');
    await credit(payer, '10', 'USD');
    const bot = await newAgent('Alpha Bot');
    await charge(bot, payer, '1.5', 'USD', 'first lookup');
    await charge(bot, payer, '100', 'USD', 'too much');
    const markup = bodyOf(await get(payer, '/console/activity'));
    expect(markup).toContain('Alpha Bot');
    expect(markup).toContain('1.50 USD');
    expect(markup).toContain('Failed: insufficient balance');
    expect(markup).toContain('Succeeded');
    expect(markup.indexOf('too much')).toBeLessThan(markup.indexOf('first lookup'));
    // The browser gave its zone: the times are in it, and no note (DESIGN §26: the note only says when times are in UTC for want of one).
    expectTimesIn(markup, 'Europe/Berlin');
    expect(markup).not.toContain('Times are shown in');
    const utc = await newPayer();
    expect(bodyOf(await get(utc, '/console/activity'))).not.toContain('Times are shown');
  });

  it('filters by status, agent and currency (query parameters), pages with Next page, and downloads the filtered rows', async () => {
    const payer = await newPayer();
    await credit(payer, '100', 'USD');
    await credit(payer, '100', 'USDC');
    const a = await newAgent('Agent A');
    const b = await newAgent('Agent B');
    for (let i = 0; i < 30; i++) await charge(a, payer, '1', 'USD', `a-usd-${i}`);
    await charge(a, payer, '2', 'USDC', 'a-usdc');
    await charge(b, payer, '3', 'USD', 'b-usd');
    await charge(b, payer, '1000', 'USD', 'b-refused');

    const byAgent = bodyOf(await get(payer, `/console/activity?agent=${b.id}`));
    expect(byAgent).toContain('b-usd');
    expect(byAgent).toContain('b-refused');
    expect(byAgent).not.toContain('a-usd-');
    const failed = bodyOf(await get(payer, `/console/activity?status=FAILED&agent=${b.id}`));
    expect(failed).toContain('b-refused');
    expect(failed).not.toContain('b-usd<');
    const usdc = bodyOf(await get(payer, '/console/activity?currency=USDC'));
    expect(usdc).toContain('2.00 USDC');
    expect(usdc).not.toContain(' USD<');

    // 32 charges of A in USD: a first page of 25 and a Next page link carrying the filters.
    const first = bodyOf(await get(payer, `/console/activity?agent=${a.id}&currency=USD`));
    const next = /href="([^"]+)" rel="next">Next page</.exec(first)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toContain(`agent=${a.id}`);
    expect(next).toContain('currency=USD');
    const second = bodyOf(await get(payer, next ?? ''));
    expect((second.match(/a-usd-/g) ?? []).length).toBe(5);
    expect(second).toContain('a-usd-0<');
    expect(second).not.toContain('rel="next"');

    const csv = csvOf(await get(payer, `/console/activity/csv?agent=${a.id}&currency=USD`));
    expect(csv.contentType).toMatch(/^text\/csv/);
    expect(csv.filename).toMatch(/^activity-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,createdAt,agent,description,amount,currency,status');
    expect(lines[0]).toBe(CSV_HEADER.join(','));
    expect(lines).toHaveLength(31);
    expect(lines[1]).toMatch(/^c[0-9a-z]+,\d{4}-\d{2}-\d{2}T[^,]+Z,Agent A,a-usd-29,1\.00,USD,SUCCESS$/);
  });

  it('escapes CSV cells (commas, quotes, line breaks)', async () => {
    const payer = await newPayer();
    await credit(payer, '10', 'USD');
    const agent = await newAgent('Bot, "the" best');
    await charge(agent, payer, '1', 'USD', 'two\nlines, "quoted"');
    const csv = csvOf(await get(payer, '/console/activity/csv'));
    expect(csv.body).toContain(',"Bot, ""the"" best","two\nlines, ""quoted""",1.00,USD,SUCCESS\r\n');
  });

  it('refuses a filter that is none (400) and a cursor that is not this payer’s (400)', async () => {
    const payer = await newPayer();
    expect(statusOf(await get(payer, '/console/activity?status=DONE'))).toBe(400);
    expect(statusOf(await get(payer, '/console/activity?agent=bob'))).toBe(400);
    expect(statusOf(await get(payer, '/console/activity/csv?currency=EUR'))).toBe(400);
    expect(statusOf(await get(payer, '/console/activity?cursor=garbage'))).toBe(400);
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
