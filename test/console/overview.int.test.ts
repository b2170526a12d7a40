/**
 * Overview (DESIGN §21) against DynamoDB Local: its last activity speaks as Activity does, the same
 * status words, the same time format and the same note naming the zone, so a payer reading both
 * pages sees one charge described one way.
 */
import { overviewPage } from '../../functions/console/own/overview.page';
import type { ConsoleResult } from '../../functions/console/page';
import { BASE_URL, bodyOf, charge, consolePagesEnv, credit, get, newAgent, newPayer, type Payer } from './pages/support';

consolePagesEnv();

const overview = (payer: Payer): Promise<ConsoleResult> =>
  overviewPage(payer.session, { method: 'GET', path: '/console', params: {}, query: {}, form: {}, baseUrl: BASE_URL, now: new Date() });

/** The last activity section's markup. */
const lastActivity = (markup: string): string => markup.slice(markup.indexOf('id="activity"'));

/** The text of the first `<time>` (the charge's) in the markup. */
const firstTime = (markup: string): string | undefined => /<time datetime="[^"]+">([^<]+)<\/time>/.exec(markup)?.[1];

describe('Overview: the last activity as Activity words it', () => {
  it('a succeeded charge: the same status word, time and zone note as on Activity', async () => {
    const payer = await newPayer('Europe/Lisbon');
    await credit(payer, '10', 'USD');
    await charge(await newAgent('Lisbon Bot'), payer, '1.5', 'USD', 'a lookup');

    const home = lastActivity(bodyOf(await overview(payer)));
    // The Statement took Activity's place (DESIGN §26): its newest row is the charge.
    const activity = bodyOf(await get(payer, '/console/statement'));
    expect(home).toContain('<dd>Succeeded</dd>');
    expect(home).not.toMatch(/\bpaid\b/);
    expect(firstTime(home)).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}$/);
    expect(firstTime(home)).toBe(firstTime(activity));
    // The browser gave its zone: the times are in it, and no note (DESIGN §26: only when it gave none).
    expect(home).not.toContain('Times are shown in');
    expect(activity).not.toContain('Times are shown in');
    expectTimesIn(home, 'Europe/Lisbon');
  });

  it('a refused charge: "Failed: <reason>", as on Activity', async () => {
    const payer = await newPayer();
    await charge(await newAgent('Broke Bot'), payer, '5', 'USD', 'too much');
    const home = lastActivity(bodyOf(await overview(payer)));
    expect(home).toContain('<dd>Failed: insufficient balance</dd>');
    // A refused charge moved no money: the Statement (in Activity's place, DESIGN §26) has no row of it.
    expect(bodyOf(await get(payer, '/console/statement'))).toContain('Nothing has moved your balance yet.');
    expect(home).toContain('Times are shown in UTC (your browser did not tell us its time zone).');
  });
});

describe('Overview: where money went (DESIGN §26)', () => {
  it('draws spend per day stacked by the top five agents and Others, with the same numbers as a table; nothing spent is an empty state', async () => {
    const payer = await newPayer();
    const empty = bodyOf(await overview(payer));
    expect(empty).toContain('Where money went');
    expect(empty).toContain('No spend in the last 30 days.');
    expect(empty).not.toContain('<svg');

    await credit(payer, '100', 'USD');
    for (let i = 1; i <= 7; i++) await charge(await newAgent(`Agent ${i}`), payer, String(i), 'USD', `work ${i}`);
    // A hold is no spend until captured.
    await charge(await newAgent('Holder'), payer, '50', 'USD', 'held', { capture: false });
    const markup = bodyOf(await overview(payer));
    const spend = markup.slice(markup.indexOf('id="spend-h"'), markup.indexOf('id="activity"'));
    expect(spend).toMatch(/<svg class="chart-svg" viewBox="0 0 400 220" role="img" aria-labelledby="spend-usd-title spend-usd-desc"/);
    expect(spend).toContain('28.00 USD in 30 days');
    expect(spend).toContain('Others (2 agents)');
    expect(spend).not.toContain('Holder');
    for (const name of ['Agent 7', 'Agent 6', 'Agent 5', 'Agent 4', 'Agent 3'])
      expect(spend).toContain(`<th scope="col" class="num">${name}</th>`);
    expect(spend).toContain('<td class="num" data-label="Total">28.00</td>');
    expect(spend).toMatch(/<dt>This month<\/dt><dd>28\.00 USD/);
    expect(spend).not.toContain('USDC');
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
