/** The per-endpoint circuit breaker's rules (core/webhooks.ts): pure, no I/O. */
import { breakerDecision, endpointBackoffSeconds, HEALTHY } from '../../functions/core/webhooks';

describe('the endpoint breaker', () => {
  const now = Date.parse('2026-01-15T09:30:00Z');

  it('sends to a healthy endpoint and to one whose failures have not opened the breaker', () => {
    expect(breakerDecision(HEALTHY, now, false)).toEqual({ kind: 'send' });
    expect(breakerDecision({ failureStreak: 4, failedProbes: 0 }, now, false)).toEqual({ kind: 'send' });
  });

  it('holds deliveries until the back-off ends, then lets one probe (claimed against the back-off it saw)', () => {
    const open = { failureStreak: 5, failedProbes: 0, backoffUntil: now + 30_000 };
    expect(breakerDecision(open, now, false)).toEqual({ kind: 'hold', until: now + 30_000 });
    expect(breakerDecision(open, now + 30_000, false)).toEqual({ kind: 'probe', seen: now + 30_000 });
  });

  it('always sends a test ping: it is how an owner checks a fix', () => {
    expect(breakerDecision({ failureStreak: 9, failedProbes: 3, backoffUntil: now + 60_000 }, now, true)).toEqual({ kind: 'send' });
  });

  it('doubles the back-off with each failed probe, from 30 s to at most an hour', () => {
    expect([0, 1, 2, 3, 6, 7, 20].map(endpointBackoffSeconds)).toEqual([30, 60, 120, 240, 1_920, 3_600, 3_600]);
  });
});
