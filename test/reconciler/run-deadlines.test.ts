/**
 * How one reconciler run shares its time among its sweeps (functions/reconciler/run-deadlines.ts):
 * each sweep's deadline is its share of the time left when it starts, so a later sweep always has
 * its share and one that finishes early leaves its time to the next.
 */
import { END_MARGIN_MS, runDeadlines } from '../../functions/reconciler/run-deadlines';

describe('the deadlines of a run', () => {
  it('has none without a time limit (the local runner, tests)', () => {
    const run = runDeadlines(undefined);
    expect(run.end).toBeUndefined();
    expect(run.deadlineOf('purchases')).toBeUndefined();
  });

  it("gives each sweep its share of the time left when it starts, and a sweep's unused time to the ones after it", () => {
    let now = 0;
    const run = runDeadlines(90_000 + END_MARGIN_MS, () => now);
    expect(run.end).toBe(90_000);
    // Payouts 4 of 8 shares; when they all run long, the x402 sweeps and purchases keep half the run.
    expect(run.deadlineOf('payouts')).toBe(45_000);
    now = 45_000;
    expect(run.deadlineOf('x402')).toBe(45_000 + 45_000 / 4);
    now = 45_000 + 45_000 / 4;
    expect(run.deadlineOf('finality')).toBe(now + (90_000 - now) / 3);
    now = 70_000;
    // The last sweep has all that is left.
    expect(run.deadlineOf('purchases')).toBe(90_000);
  });

  it('leaves a sweep started early more time when the ones before it were quick', () => {
    let now = 0;
    const run = runDeadlines(60_000 + END_MARGIN_MS, () => now);
    now = 1_000;
    // Payouts and the x402 sweeps took a second: purchases get the rest of the run.
    expect(run.deadlineOf('purchases')).toBe(60_000);
  });

  it('gives a sweep that starts past the end no time at all', () => {
    let now = 0;
    const run = runDeadlines(10_000 + END_MARGIN_MS, () => now);
    now = 12_000;
    expect(run.deadlineOf('finality')).toBe(12_000);
  });
});
