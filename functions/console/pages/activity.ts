/**
 * Activity's URLs (DESIGN §21) after the statement took its place (DESIGN §26): a bookmark or a
 * link to `/console/activity` (and its CSV) lands on the Statement, with the filters the statement
 * has too — `agent` and `currency` — kept. Activity's `status` (a charge's) and its cursor (a
 * position in the charges, not in the statement) have no meaning there and are dropped.
 */
import type { ConsolePage, ConsoleRoute } from '../page';

const KEPT = ['agent', 'currency'] as const;

const to =
  (path: string): ConsolePage =>
  async (_session, req) => {
    const params = new URLSearchParams();
    for (const name of KEPT) {
      const value = req.query[name];
      if (value) params.set(name, value);
    }
    const query = params.toString();
    return { kind: 'redirect', location: `${path}${query ? `?${query}` : ''}` };
  };

export const ACTIVITY_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/console/activity', page: to('/console/statement') },
  { method: 'GET', path: '/console/activity/csv', page: to('/console/statement/csv') },
];
