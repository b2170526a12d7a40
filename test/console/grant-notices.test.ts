/**
 * The console's grant limit notices (functions/console/pages/grant-notices.ts; DESIGN §27): an
 * active grant at or above 80% of a windowed limit in its current window is named on Grants;
 * another window's counter, a revoked grant and perCharge are not.
 */
import { grantLimitNotices, refusedByLimitNotice } from '../../functions/console/pages/grant-notices';
import type { Grant } from '../../functions/core/grants';

const now = new Date('2026-01-15T10:30:00.000Z');
const grant = (over: Partial<Grant>): Grant => ({
  id: 'g01jhx3k6v1f8q2n7c9m4p5r6s7',
  userId: 'u1',
  agentId: 'a1',
  agentName: 'weather-bot',
  currency: 'USD',
  limits: {},
  description: '',
  createdAt: '2026-01-01T00:00:00.000Z',
  spent: 0,
  ...over,
});

describe('grant limit notices', () => {
  it('names a grant near or at a limit in its current window, and nothing else', () => {
    const near = grantLimitNotices([grant({ limits: { daily: 1000 }, spentDay: { p: '2026-01-15', v: 800 } })], now).toString();
    expect(near).toContain('weather-bot');
    expect(near).toContain('is near its daily limit: 8.00 USD of 10.00 USD today (UTC)');
    const reached = grantLimitNotices([grant({ limits: { hourly: 100 }, spentHour: { p: '2026-01-15T10', v: 100 } })], now).toString();
    expect(reached).toContain('has reached its hourly limit');
    expect(grantLimitNotices([grant({ limits: { total: 100 }, spent: 79 })], now).toString()).toBe('');
    expect(grantLimitNotices([grant({ limits: { daily: 100 }, spentDay: { p: '2026-01-14', v: 100 } })], now).toString()).toBe('');
    expect(grantLimitNotices([grant({ limits: { total: 100 }, spent: 100, revokedAt: '2026-01-15T00:00:00.000Z' })], now).toString()).toBe(
      '',
    );
    expect(grantLimitNotices([grant({ limits: { perCharge: 1 }, spent: 100 })], now).toString()).toBe('');
  });

  it("Overview's notice only when a recent grant charge was refused by a limit", () => {
    expect(refusedByLimitNotice(true).toString()).toContain('/console/grants');
    expect(refusedByLimitNotice(undefined).toString()).toBe('');
  });
});
