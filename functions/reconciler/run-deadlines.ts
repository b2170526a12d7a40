/**
 * One reconciler run's time, shared among its sweeps (DESIGN §24). The Lambda runs at most 90 s;
 * a sweep with no deadline (a slow RPC, a long list) could spend all of it and the ones after it
 * would never run. Each sweep gets a deadline when it starts: its share of the time left, against
 * the shares of the sweeps still to run, so one that finishes early leaves its time to the next,
 * and one that runs long stops cleanly at its deadline (the rest of its list is the next run's).
 * Without a Lambda context (the local runner, tests) a run has no deadlines.
 */

/** The sweeps of a run, in the order they run. */
export const SWEEPS = ['payouts', 'x402', 'finality', 'purchases'] as const;
export type Sweep = (typeof SWEEPS)[number];

/**
 * Each sweep's weight: payouts move the most money and one may wait ~40 s on a confirmation;
 * purchases may search 20,000 signatures; the x402 settlements' two sweeps read one status each.
 */
const SHARES: Readonly<Record<Sweep, number>> = { payouts: 4, x402: 1, finality: 1, purchases: 2 };

/** Kept after the last sweep: the metrics flushed and the report returned before the Lambda's timeout. */
export const END_MARGIN_MS = 3_000;

export interface RunDeadlines {
  /** When the run's sweeps must be done by (epoch ms); undefined without a time limit. */
  end: number | undefined;
  /** The deadline (epoch ms) of `sweep`, asked as it starts; undefined without a time limit. */
  deadlineOf(sweep: Sweep): number | undefined;
}

export function runDeadlines(remainingMs: number | undefined, now: () => number = Date.now): RunDeadlines {
  if (remainingMs === undefined) return { end: undefined, deadlineOf: () => undefined };
  const end = now() + remainingMs - END_MARGIN_MS;
  return {
    end,
    deadlineOf(sweep) {
      const at = now();
      const owed = SWEEPS.slice(SWEEPS.indexOf(sweep)).reduce((sum, s) => sum + SHARES[s], 0);
      return at + (Math.max(0, end - at) * SHARES[sweep]) / owed;
    },
  };
}
