/**
 * Activity's URLs (DESIGN §21) after the Statement took its place (DESIGN §26): each redirects to
 * the Statement (its CSV to the Statement's CSV) with the filters both have — `agent`, `currency` —
 * kept, and the rest (a charge's `status`, a charges cursor) dropped. The Statement itself:
 * statement.int.test.ts.
 */
import { consolePagesEnv, get, newPayer } from './support';

consolePagesEnv();

describe('Activity’s URLs', () => {
  it('redirect to the Statement, keeping agent and currency', async () => {
    const payer = await newPayer();
    const agent = 'a01jhx3k6v1f8q2n7c9m4p5r6s7';
    expect(await get(payer, '/console/activity')).toEqual({ kind: 'redirect', location: '/console/statement' });
    expect(await get(payer, `/console/activity?status=FAILED&agent=${agent}&currency=USDC&cursor=abc`)).toEqual({
      kind: 'redirect',
      location: `/console/statement?agent=${agent}&currency=USDC`,
    });
    expect(await get(payer, '/console/activity/csv?currency=USD')).toEqual({
      kind: 'redirect',
      location: '/console/statement/csv?currency=USD',
    });
  });
});
