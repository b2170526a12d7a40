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
    expect(home).toContain('Times are shown in Europe/Lisbon.');
    expect(activity).toContain('Times are shown in Europe/Lisbon.');
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
